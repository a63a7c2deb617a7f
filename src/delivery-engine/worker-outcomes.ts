import { countDelivery, metrics } from "../metrics.js";
import type { ClaimedDelivery } from "./queue.js";
import type { DeliveryOutcome } from "./sender.js";

/**
 * A delivery of a webhook disabled since it was queued is not sent: it is recorded as a failed attempt
 * with this message, so it shows in the webhook's deliveries and can be retried once it is enabled.
 */
export const notSentDisabledMessage = (webhookId: number): string =>
  `Not sent: webhook ${webhookId} was disabled after this delivery was queued. Enable it and retry this delivery to send it.`;

export function notSentOutcome(delivery: ClaimedDelivery): DeliveryOutcome {
  return {
    success: false,
    statusCode: 0,
    responseBody: "",
    errorMessage: notSentDisabledMessage(delivery.webhook_id),
    failure: null,
    durationMs: 0,
    requestTimestamp: null,
    signature: null,
  };
}

/** Records an attempt's outcome in the metrics. */
export function observeOutcome(
  delivery: { webhook_id: number; event_type: string },
  outcome: DeliveryOutcome,
): void {
  const result = outcome.success ? "success" : "failure";
  countDelivery({
    webhook_id: String(delivery.webhook_id),
    event_type: delivery.event_type,
    outcome: result,
    reason: outcome.failure ?? "none",
  });
  metrics.deliveryDuration.observe({ outcome: result }, outcome.durationMs / 1000);
}

/**
 * When the next attempt is due after this one, or null when none follows automatically: the wait
 * before retry n is `retryDelaysMs[n - 1]` (the last one for later retries), jittered ±20 %.
 */
export function retryDelay(
  delivery: ClaimedDelivery,
  outcome: DeliveryOutcome,
  retryDelaysMs: number[],
): number | null {
  const max = delivery.retry_max_attempts;
  if (outcome.success || max === null || delivery.attempt_number >= max) return null;
  const base = retryDelaysMs[Math.min(delivery.attempt_number, retryDelaysMs.length) - 1] ?? 0;
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
