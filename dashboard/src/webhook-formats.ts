import { type DeliveryFormat, deliveryFormats } from "../../src/formats/types.js";

// A webhook's delivery format settings, as the API names them (docs/api.md, "Formats"). Spelled here
// until the API's zod schemas carry them: then api-types.ts derives them like every other field, and
// these types shrink to aliases of those.

export { type DeliveryFormat, deliveryFormats };
export type CloudEventsMode = "structured" | "binary";
export type SignatureScheme = "hmac-sha256" | "standard-webhooks";

/** The format fields of a webhook as read (all optional: a service without formats has none). */
export interface WebhookFormatFields {
  format?: DeliveryFormat;
  cloudevents_mode?: CloudEventsMode;
  template?: string | null;
  template_content_type?: string;
  signature_scheme?: SignatureScheme;
  header_names?: string[];
}

/** The format fields of a create or update body; `headers` is write-only, null removes them. */
export interface WebhookFormatBody {
  format?: DeliveryFormat;
  cloudevents_mode?: CloudEventsMode;
  template?: string | null;
  template_content_type?: string;
  signature_scheme?: SignatureScheme;
  headers?: Record<string, string> | null;
}

/** The preview of a webhook's delivery: the exact body and headers it would send, nothing sent. */
export interface DeliveryPreview {
  event_type: string;
  content_type: string;
  /** Custom header values show as "********". */
  headers: Record<string, string>;
  /** Null when the template failed to render (then `error` says why). */
  body: string | null;
  error?: string;
}

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

/**
 * A webhook's format fields. The cast is the one place that knows the API's webhook type does not
 * declare them yet; a service without formats answers without them, which reads as every default.
 */
export const formatFieldsOf = (webhook: object | undefined) => webhook as WebhookFormatFields | undefined;
