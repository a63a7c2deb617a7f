import { type DeploymentEventType, eventTypes } from "../event-types.js";
import { z } from "../http/openapi.js";
import { templateRule } from "./format-fields.js";
import { createWebhookBody } from "./schemas.js";

// The preview operations' request and answer (preview-routes.ts), apart from the routes so the
// dashboard's types can be derived from them without reaching the engine.

const emittedTypes = eventTypes.filter((type) => type.emitted).map((type) => type.event_type) as [
  DeploymentEventType,
  ...DeploymentEventType[],
];

const eventType = z
  .enum(emittedTypes, { error: `event_type must be one of: ${emittedTypes.join(", ")}` })
  .default("deployment.succeeded")
  .openapi({ description: "Default deployment.succeeded" });

export const previewBody = z.strictObject({ event_type: eventType }).openapi("PreviewRequest");
// A draft is what a create takes, nothing required (a form being filled in), plus the event to preview.
export const draftPreviewBody = createWebhookBody
  .partial()
  .extend({ event_type: eventType })
  .openapi("DraftPreviewRequest", templateRule.create);

export const previewSchema = z
  .object({
    event_type: z.string(),
    content_type: z.string().nullable(),
    headers: z.record(z.string(), z.string()),
    body: z.string().nullable(),
    error: z
      .string()
      .optional()
      .openapi({ description: "Why the format could not render the event; body is null then" }),
  })
  .openapi("Preview", {
    description:
      "An example event as the webhook would send it: the body exactly, and every header in send order " +
      "(X-Webhook-Delivery 0, custom header values as ********).",
  });
