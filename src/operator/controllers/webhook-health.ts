import type { Queryable } from "../../db/pool.js";
import { type DeliveryHealthRows, readDeliveryHealth } from "../../deliveries/health-store.js";
import { setCondition } from "../api/conditions.js";
import {
  type AttemptSummary,
  type DeliveryHealthStatus,
  healthReasons,
  healthWindowMs,
  healthyCondition,
  recentDeliveriesShown,
} from "../api/delivery-health.js";
import type { Condition, WebhookResource, WebhookStatus } from "../api/webhook-v1alpha1.js";
import { summariseAttempt } from "./attempt-reason.js";

/**
 * How many of the latest attempts a refresh reads: enough to find the last success and the last failure
 * of nearly every webhook; one older than them all is carried over from the previous status.
 */
export const attemptsRead = 100;

/**
 * `status` with the delivery health of the service webhook `webhookId` added: the counts, the last
 * success and failure, the latest attempts, `lastDelivery` and the `Healthy` condition. `resource` is
 * the Webhook as last seen, whose status the new one is compared with.
 */
export async function withDeliveryHealth(
  db: Queryable,
  webhookId: number,
  resource: Pick<WebhookResource, "metadata" | "status">,
  status: WebhookStatus,
  now: Date,
): Promise<WebhookStatus> {
  const rows = await readDeliveryHealth(db, webhookId, {
    since: new Date(now.getTime() - healthWindowMs),
    latest: attemptsRead,
  });
  const previous = resource.status?.webhookId === webhookId ? resource.status : undefined;
  const health = deliveryHealth(rows, previous);
  const last = health.recentDeliveries?.[0];
  return {
    ...status,
    ...health,
    lastDelivery: last
      ? {
          at: last.at,
          success: last.success,
          statusCode: last.statusCode,
          eventType: last.eventType,
        }
      : null,
    conditions: setCondition(status.conditions, healthCondition(health, resource.metadata.generation), now),
  };
}

/**
 * The status fields from the records. `previous` is the status of the same service webhook, whose last
 * success or failure stands when none is among the attempts read (older ones, or ones retention removed).
 */
export function deliveryHealth(
  rows: DeliveryHealthRows,
  previous?: DeliveryHealthStatus,
): DeliveryHealthStatus {
  const attempts = rows.attempts.map(summariseAttempt);
  const lastSuccess = attempts.find((attempt) => attempt.success) ?? previous?.lastSuccess;
  const lastFailure = attempts.find((attempt) => !attempt.success) ?? previous?.lastFailure;
  return {
    deliveriesLastHour: { succeeded: rows.succeeded, failed: rows.failed },
    lastSuccess: lastSuccess ?? null,
    lastFailure: lastFailure ?? null,
    recentDeliveries: attempts.length > 0 ? attempts.slice(0, recentDeliveriesShown) : null,
  };
}

/** The latest attempt: the newest one read, else the later of the carried-over success and failure. */
function latestOf(health: DeliveryHealthStatus): AttemptSummary | undefined {
  const { lastSuccess, lastFailure } = health;
  if (health.recentDeliveries?.[0]) return health.recentDeliveries[0];
  if (!lastSuccess || !lastFailure) return lastSuccess ?? lastFailure ?? undefined;
  return lastSuccess.at >= lastFailure.at ? lastSuccess : lastFailure;
}

/**
 * The `Healthy` condition: how the latest attempt went. It turns False at the first failed attempt and
 * back to True at the next success, so `kubectl wait --for=condition=Healthy` waits for a recovery and an
 * alert on `Healthy=False` fires while the receiver fails. The reason tells a receiver that fails now and
 * then (`Degraded`: something succeeded in the last hour) from one that fails every time (`Failing`).
 * Messages carry no URL and no response body (see attempt-reason.ts).
 */
export function healthCondition(
  health: DeliveryHealthStatus,
  observedGeneration: number | undefined,
): Omit<Condition, "lastTransitionTime"> {
  const latest = latestOf(health);
  const counts = health.deliveriesLastHour ?? { succeeded: 0, failed: 0 };
  const lastHour = `Last hour: ${counts.succeeded} succeeded, ${counts.failed} failed.`;
  const base = { type: healthyCondition, observedGeneration };
  if (!latest) {
    return {
      ...base,
      status: "Unknown",
      reason: healthReasons.noDeliveries,
      message: "No delivery has been attempted yet.",
    };
  }
  if (latest.success) {
    return {
      ...base,
      status: "True",
      reason: healthReasons.delivering,
      message: `The latest delivery succeeded (${latest.reason}). ${lastHour}`,
    };
  }
  return {
    ...base,
    status: "False",
    reason: counts.succeeded > 0 ? healthReasons.degraded : healthReasons.failing,
    message: `The latest delivery failed (${latest.reason}). ${lastHour}`,
  };
}
