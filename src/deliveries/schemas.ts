import { z } from "../http/openapi.js";
import { deliveryLimit } from "../http/pagination.js";
import { idParam, isoTimestamp } from "../http/schemas.js";

export const deliveryParams = z.object({
  project_id: idParam("project_id"),
  webhook_id: idParam("webhook_id"),
  delivery_id: idParam("delivery_id"),
});

export const listDeliveriesQuery = z.object({ limit: deliveryLimit });

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
