import type { z } from "zod";
import type { draftPreviewBody, previewSchema } from "../../src/webhooks/preview-schemas.js";
import type { CreateWebhook, Webhook } from "./api-types";

// A webhook's delivery format settings, derived (type-only) from the API's zod schemas like
// api-types.ts: a field renamed on the server fails this package's typecheck (docs/api.md, "Formats").

export type DeliveryFormat = Webhook["format"];
export type CloudEventsMode = Webhook["cloudevents_mode"];
export type SignatureScheme = Webhook["signature_scheme"];

/** The format fields of a webhook as read. */
export type WebhookFormatFields = Pick<
  Webhook,
  "format" | "cloudevents_mode" | "template" | "template_content_type" | "signature_scheme" | "header_names"
>;

/** The format fields of a create or update body; `headers` is write-only, null removes them. */
export type WebhookFormatBody = Pick<
  CreateWebhook,
  "format" | "cloudevents_mode" | "template" | "template_content_type" | "signature_scheme" | "headers"
>;

/**
 * A draft webhook to preview: what a create takes, nothing required, and the event to render. Event
 * names are strings here as in api-types.ts: the dashboard has them from the API's catalogue.
 */
export type DraftPreview = Omit<z.input<typeof draftPreviewBody>, "events" | "event_type"> & {
  events?: string[];
  event_type?: string;
};

/** The preview of a webhook's delivery: the exact body and headers it would send, nothing sent. */
export type DeliveryPreview = z.infer<typeof previewSchema>;

/** The formats in the order the form offers them: the server's own list, bundled (it is plain data). */
export { deliveryFormats } from "../../src/formats/types.js";

export const formatLabels: Record<DeliveryFormat, string> = {
  envelope: "Envelope (our JSON, X-Webhook-* headers)",
  cloudevents: "CloudEvents 1.0",
  slack: "Slack",
  msteams: "Microsoft Teams (Adaptive Card)",
  discord: "Discord",
  googlechat: "Google Chat",
  template: "Template of your own (Liquid)",
};

/** The short name shown on the webhook's page. */
export const formatNames: Record<DeliveryFormat, string> = {
  envelope: "Envelope",
  cloudevents: "CloudEvents",
  slack: "Slack",
  msteams: "Microsoft Teams",
  discord: "Discord",
  googlechat: "Google Chat",
  template: "Template",
};
