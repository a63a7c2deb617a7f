import { z } from "../http/openapi.js";
import { deliveryLimit } from "../http/pagination.js";
import { idParam, isoTimestamp } from "../http/schemas.js";
import { cursorPattern } from "./cursor.js";

export const deliveryParams = z.object({
  project_id: idParam("project_id"),
  webhook_id: idParam("webhook_id"),
  delivery_id: idParam("delivery_id"),
});

export const listDeliveriesQuery = z.object({
  limit: deliveryLimit,
  cursor: z
    .string()
    .regex(
      cursorPattern,
      "cursor is not one this service issues; start without it and follow the Link header's next address",
    )
    .optional()
    .openapi({ description: 'Opaque; take it from the previous page\'s Link rel="next" header' }),
  success: z
    .enum(["true", "false"], { error: "success must be true or false" })
    .transform((value) => value === "true")
    .optional()
    .openapi({ description: "Only successful (true) or failed (false) attempts" }),
  event_type: z
    .string()
    .min(1, "event_type must not be empty")
    .max(200)
    .optional()
    .openapi({ description: "Only attempts of this event type", example: "deployment.failed" }),
});

export const deliverySchema = z
  .object({
    id: z.number().int(),
    webhook_id: z.number().int(),
    event_type: z.string(),
    event_id: z.string().openapi({ format: "uuid" }),
    payload: z.string().openapi({
      description:
        "The body exactly as sent: the envelope as JSON text, or the body the webhook's format rendered " +
        "(docs/formats.md). A delivery whose format could not render shows the event's envelope.",
    }),
    success: z.boolean(),
    status_code: z.number().int().openapi({ description: "HTTP status answered; 0 when no response came" }),
    response_body: z.string(),
    error_message: z.string().nullable(),
    attempt_number: z.number().int(),
    created_at: isoTimestamp,
    delivered_at: isoTimestamp,
    request_headers: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({
        description:
          "The delivery headers exactly as this attempt sent them (X-Webhook-Signature only when signed; " +
          "it is the HMAC digest, never the secret); with a format, signature scheme or custom headers, every header " +
          "sent, custom header values shown as ********. null when no request was sent (refused destination or secret " +
          "that could not be decrypted) or the attempt predates this field.",
        example: {
          "Content-Type": "application/json",
          "X-Webhook-Event": "deployment.succeeded",
          "X-Webhook-Delivery": "42",
          "X-Webhook-Timestamp": "1795390000",
          "X-Webhook-Signature": "sha256=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
        },
      }),
    duration_ms: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "How long the attempt took, in milliseconds: from the start of the send (connecting included) to the " +
          "end of the response or the failure. null when no request was sent, or for attempts older than this field.",
      }),
  })
  .openapi("Delivery");

const retryResultFields = {
  success: z.boolean(),
  status_code: z.number().int(),
  error_message: z.string().nullable(),
  attempt_number: z.number().int(),
  delivery_id: z.number().int().openapi({ description: "The new attempt's delivery record" }),
};
export const retryResultSchema = z.object(retryResultFields).openapi("RetryResult");

// The fields spelt out rather than an `allOf` of RetryResult: generators flattening an allOf lose its
// null types (openapi-generator).
export const testEventResultSchema = z
  .object({ ...retryResultFields, event_id: z.string().openapi({ format: "uuid" }) })
  .openapi("TestEventResult");

const statsBucket = z.object({
  start: isoTimestamp.openapi({ description: "Start of the bucket (UTC)" }),
  succeeded: z.number().int(),
  failed: z.number().int(),
});

export const deliveryStatsQuery = z.object({
  range: z
    .enum(["24h", "30d"], { error: "range must be 24h or 30d" })
    .default("24h")
    .openapi({ description: "24h: hourly buckets for the last 24 hours; 30d: daily buckets for 30 days" }),
});

export const deliveryStatsSchema = z
  .object({
    range: z.enum(["24h", "30d"]),
    bucket: z.enum(["hour", "day"]),
    buckets: z
      .array(statsBucket)
      .openapi({ description: "Oldest first; every bucket present, zeros included" }),
    succeeded: z.number().int().openapi({ description: "Successful attempts in the whole range" }),
    failed: z.number().int().openapi({ description: "Failed attempts in the whole range" }),
    last_delivery: z
      .object({
        id: z.number().int(),
        event_type: z.string(),
        success: z.boolean(),
        status_code: z.number().int(),
        delivered_at: isoTimestamp,
      })
      .nullable()
      .openapi({ description: "The newest attempt, whenever it was; null before the first" }),
  })
  .openapi("DeliveryStats");

const instant = (name: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-22T10:00:00Z` })
    .transform((value) => new Date(value))
    .openapi({ type: "string", format: "date-time", example: "2026-11-22T10:00:00Z" });

export const recoverBody = z
  .strictObject({
    since: instant("since").openapi({
      description: "Recover failures of attempts created at or after this time",
    }),
    until: instant("until").optional().openapi({ description: "… and before this time (default: now)" }),
    event_type: z
      .string()
      .min(1, "event_type must not be empty")
      .max(200)
      .optional()
      .openapi({ description: "Only this event type", example: "deployment.failed" }),
  })
  .openapi("RecoverRequest");

export const recoverResultSchema = z
  .object({
    queued: z.number().int().openapi({ description: "Events queued for a new attempt" }),
    since: isoTimestamp,
    until: isoTimestamp,
    event_type: z.string().nullable(),
    limit: z
      .number()
      .int()
      .openapi({ description: "At most this many are queued per call; call again for the rest" }),
  })
  .openapi("RecoverResult");
