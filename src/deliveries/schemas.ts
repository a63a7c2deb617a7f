import { z } from "../http/openapi.js";
import { idParam, isoTimestamp } from "../http/schemas.js";

export const deliveryParams = z.object({
  project_id: idParam("project_id"),
  webhook_id: idParam("webhook_id"),
  delivery_id: idParam("delivery_id"),
});

export const listDeliveriesQuery = z.object({
  limit: z.coerce
    .number({ error: "limit must be an integer" })
    .int("limit must be an integer")
    .transform((value) => Math.min(100, Math.max(1, value)))
    .default(50)
    .openapi({ description: "How many deliveries, newest first; default 50, clamped to 1–100", example: 50 }),
});

export const deliverySchema = z
  .object({
    id: z.number().int(),
    webhook_id: z.number().int(),
    event_type: z.string(),
    event_id: z.string().openapi({ format: "uuid" }),
    payload: z.string().openapi({ description: "The envelope as JSON text, exactly as sent" }),
    success: z.boolean(),
    status_code: z.number().int().openapi({ description: "HTTP status answered; 0 when no response came" }),
    response_body: z.string(),
    error_message: z.string().nullable(),
    attempt_number: z.number().int(),
    created_at: isoTimestamp,
    delivered_at: isoTimestamp,
  })
  .openapi("Delivery");

export const retryResultSchema = z
  .object({
    success: z.boolean(),
    status_code: z.number().int(),
    error_message: z.string().nullable(),
    attempt_number: z.number().int(),
  })
  .openapi("RetryResult");
