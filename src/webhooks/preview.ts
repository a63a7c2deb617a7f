import {
  type DeliveryShape,
  maskedHeaderValue,
  shapedBody,
  shapedHeaders,
} from "../delivery-engine/delivery-shape.js";
import { defaultUserAgent, signPayload } from "../delivery-engine/sender.js";
import { exampleDeploymentPayload } from "../deployments/example-payload.js";
import type { DeploymentEventType } from "../event-types.js";
import { createEnvelope } from "../formats/envelope.js";
import { RenderError } from "../formats/types.js";
import type { ProjectRow } from "../projects/store.js";
import type { FormatSettings } from "./format-fields.js";

// A preview renders an example event for a webhook, or a draft of one, through the same body and header
// builders the sender uses (delivery-engine/delivery-shape.ts): what it shows is what a send of that
// event would send, with three differences a preview cannot avoid: the event is an example (a new id, a
// timestamp of now), X-Webhook-Delivery is 0 (no delivery record exists), and custom header values are
// shown as asterisks. Nothing is sent or recorded.

export interface PreviewResult {
  event_type: string;
  content_type: string | null;
  headers: Record<string, string>;
  body: string | null;
  error?: string;
}

export interface PreviewSubject {
  settings: FormatSettings;
  /** The signing secret in clear, or null for an unsigned webhook. */
  secret: string | null;
  customHeaderNames: string[];
}

export async function previewDelivery(
  project: Pick<ProjectRow, "id" | "name">,
  subject: PreviewSubject,
  eventType: DeploymentEventType,
): Promise<PreviewResult> {
  const envelope = createEnvelope(eventType, project.id, exampleDeploymentPayload(eventType, project));
  const { settings } = subject;
  const shape: DeliveryShape = {
    format: settings.format,
    cloudevents_mode: settings.cloudeventsMode,
    template: settings.template,
    template_content_type: settings.templateContentType,
    signature_scheme: settings.signatureScheme,
    headers: null,
    event_id: envelope.id,
    body: null,
    body_headers: null,
    rollout_details: false,
    rollout: null,
  };
  let rendered: Awaited<ReturnType<typeof shapedBody>>;
  try {
    rendered = await shapedBody(shape, JSON.stringify(envelope));
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    return { event_type: eventType, content_type: null, headers: {}, body: null, error: error.message };
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const { body, bodyHeaders } = rendered;
  const hmac =
    subject.secret !== null && settings.signatureScheme === "hmac-sha256"
      ? signPayload(subject.secret, String(timestamp), body)
      : null;
  const { headers } = shapedHeaders({
    shape,
    bodyHeaders,
    body,
    eventType,
    deliveryId: 0,
    timestamp,
    key: subject.secret,
    hmacSignature: hmac,
    customHeaders: Object.fromEntries(subject.customHeaderNames.map((name) => [name, maskedHeaderValue])),
  });
  headers["User-Agent"] = defaultUserAgent;
  return { event_type: eventType, content_type: bodyHeaders["Content-Type"] ?? null, headers, body };
}
