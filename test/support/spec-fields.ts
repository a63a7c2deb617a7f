// The field names of the spec's resources, written out once for the tests that check shapes exactly.

/** Spec §2.5, a webhook, plus managed_by (an additive field: the Webhook resource that owns it). */
export const webhookFields = [
  "id",
  "project_id",
  "url",
  "events",
  "enabled",
  "has_secret",
  "created_at",
  "updated_at",
  "managed_by",
];

/** Spec §2.6, a delivery record. */
export const deliveryFields = [
  "id",
  "webhook_id",
  "event_type",
  "event_id",
  "payload",
  "success",
  "status_code",
  "response_body",
  "error_message",
  "attempt_number",
  "created_at",
  "delivered_at",
];
