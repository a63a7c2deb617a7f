import { renderBody } from "../formats/render.js";
import { envelopeWithRollout, type RolloutDetails } from "../formats/rollout-details.js";
import { standardWebhooksSignature } from "../formats/standard-webhooks.js";
import type { DeliveryFormat } from "../formats/types.js";
import { deliveryHeaders } from "./delivery-headers.js";

// What a delivery looks like when its webhook chose more than the default (docs/formats.md): a format
// other than the envelope, the Standard Webhooks signature scheme, or custom headers. Envelope webhooks
// have no shape (null) and take the sender's original path, untouched.

/** A webhook's delivery settings as a claim reads them, with what the delivery row itself kept. */
export interface DeliveryShape {
  format: DeliveryFormat;
  cloudevents_mode: "structured" | "binary";
  template: string | null;
  template_content_type: string | null;
  signature_scheme: "hmac-sha256" | "standard-webhooks";
  /** The custom headers, sealed (a JSON object); null for none. */
  headers: string | null;
  /** The event's id: Standard Webhooks' webhook-id. */
  event_id: string;
  /** The body this delivery sends instead of rendering one (a replay's, copied from its original). */
  body: string | null;
  body_headers: Record<string, string> | null;
  /** Whether the webhook opted in to `payload.rollout` (JSON bodies carry it only then). */
  rollout_details: boolean;
  /** The event's rollout details; null for an event without them. Chat cards and templates show them. */
  rollout: RolloutDetails | null;
}

/** What a custom header's value is shown as wherever headers are shown (previews, delivery records). */
export const maskedHeaderValue = "********";

/**
 * The body a shaped delivery sends: the one it kept (replays), the envelope's text itself, or the
 * format's rendering of the envelope. Throws RenderError when the format cannot render it.
 */
export async function shapedBody(
  shape: DeliveryShape,
  envelopeText: string,
): Promise<{ body: string; bodyHeaders: Record<string, string> }> {
  if (shape.body !== null) {
    return { body: shape.body, bodyHeaders: shape.body_headers ?? { "Content-Type": "application/json" } };
  }
  // The opt-in adds payload.rollout to the envelope every format starts from; without it the envelope is
  // the stored text itself, byte for byte.
  const carried =
    shape.rollout_details && shape.rollout !== null
      ? envelopeWithRollout(envelopeText, shape.rollout)
      : envelopeText;
  if (shape.format === "envelope")
    return { body: carried, bodyHeaders: { "Content-Type": "application/json" } };
  const rendered = await renderBody(
    shape.format,
    {
      envelope: JSON.parse(carried),
      rollout: shape.rollout,
      template: shape.template,
      templateContentType: shape.template_content_type,
    },
    { cloudeventsMode: shape.cloudevents_mode },
  );
  return { body: rendered.body, bodyHeaders: { "Content-Type": rendered.contentType, ...rendered.headers } };
}

/**
 * Every header of a shaped request, in send order: the body's (Content-Type, the format's), ours
 * (X-Webhook-Event, -Delivery, -Timestamp), the signature of the webhook's scheme when it has a secret,
 * then the custom headers. The sender and the preview both build headers here, so they cannot differ.
 */
export function shapedHeaders(facts: {
  shape: DeliveryShape;
  bodyHeaders: Record<string, string>;
  body: string;
  eventType: string;
  deliveryId: number | string;
  timestamp: number;
  /** The opened secret, or null when unsigned. */
  key: string | null;
  /** X-Webhook-Signature's value (hmac-sha256 scheme), computed by the sender's own signer. */
  hmacSignature: string | null;
  customHeaders: Record<string, string>;
}): { headers: Record<string, string>; signature: string | null } {
  const ours = deliveryHeaders({
    eventType: facts.eventType,
    deliveryId: facts.deliveryId,
    timestamp: facts.timestamp,
    signature: facts.shape.signature_scheme === "hmac-sha256" ? facts.hmacSignature : null,
  });
  delete ours["Content-Type"];
  const headers: Record<string, string> = { ...facts.bodyHeaders, ...ours };
  let signature = facts.shape.signature_scheme === "hmac-sha256" ? facts.hmacSignature : null;
  if (facts.shape.signature_scheme === "standard-webhooks") {
    const timestamp = String(facts.timestamp);
    headers["webhook-id"] = facts.shape.event_id;
    headers["webhook-timestamp"] = timestamp;
    if (facts.key !== null) {
      signature = standardWebhooksSignature(facts.key, facts.shape.event_id, timestamp, facts.body);
      headers["webhook-signature"] = signature;
    }
  }
  Object.assign(headers, facts.customHeaders);
  return { headers, signature };
}
