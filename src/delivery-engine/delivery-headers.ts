/** What a delivery's headers are made of: the two computed at send time are kept with its record. */
export interface DeliveryHeaderFacts {
  eventType: string;
  deliveryId: number | string;
  /** X-Webhook-Timestamp: Unix seconds. */
  timestamp: number | string;
  /** X-Webhook-Signature, or null when the webhook has no secret. */
  signature: string | null;
}

/**
 * The headers of every delivery (docs/api.md), in the order they are sent, as the sender sends them and
 * as a delivery record shows them (request_headers): one builder, so the two cannot differ.
 * X-Webhook-Signature only when the delivery is signed.
 */
export function deliveryHeaders(facts: DeliveryHeaderFacts): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Webhook-Event": facts.eventType,
    "X-Webhook-Delivery": String(facts.deliveryId),
    "X-Webhook-Timestamp": String(facts.timestamp),
  };
  if (facts.signature !== null) headers["X-Webhook-Signature"] = facts.signature;
  return headers;
}
