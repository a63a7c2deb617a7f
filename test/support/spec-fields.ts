// The field names of the spec's resources, written out once for the tests that check shapes exactly.

/**
 * Spec §2.5, a webhook, plus additive fields: managed_by (the Webhook resource that owns it) and the
 * opt-in delivery policies with the automatic disable they may record.
 */
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
  "retry_policy",
  "auto_disable",
  "disabled_reason",
  "disabled_at",
  "format",
  "cloudevents_mode",
  "template",
  "template_content_type",
  "signature_scheme",
  "header_names",
  "rate_limit",
  "throttled_until",
];

/** Webhook fields present only when set: a webhook without them answers exactly `webhookFields`. */
export const optionalWebhookFields = ["filters", "url_secret", "rollout_details"];

/**
 * Spec §2.6, a delivery record, plus additive fields: request_headers (the §4.1 headers as sent) and
 * duration_ms (how long the attempt took).
 */
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
  "request_headers",
  "duration_ms",
];
