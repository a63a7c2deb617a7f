import type { Pool } from "../db/pool.js";
import { isUniqueViolation } from "../db/sqlstate.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { eventExists, insertLeasedDelivery } from "../delivery-engine/queue.js";
import type { DeliveryOutcome } from "../delivery-engine/sender.js";
import { ConflictError, GoneError } from "../errors.js";
import { metrics } from "../metrics.js";
import { webhookNotFound } from "../webhooks/service.js";
import type { WebhookRow } from "../webhooks/store.js";
import { deliveryNotFound } from "./not-found.js";
import { type DeliveryRecordRow, findDeliveryRecord } from "./store.js";

/** Spec §2.7, and the new attempt's delivery record (an addition: clients link to it). */
export interface RetryResult {
  success: boolean;
  status_code: number;
  error_message: string | null;
  attempt_number: number;
  delivery_id: number;
}

/** A synchronous send's outcome as the API answers it. */
export function retryResult(
  outcome: DeliveryOutcome,
  row: { id: number; attempt_number: number },
): RetryResult {
  return {
    success: outcome.success,
    status_code: outcome.statusCode,
    error_message: outcome.errorMessage,
    attempt_number: row.attempt_number,
    delivery_id: row.id,
  };
}

const maxAttemptNumberRaces = 5;

/**
 * The body a replay sends again, byte for byte with its Content-Type and format headers: the one the
 * original rendered, or the envelope it sent before its webhook chose a format. Undefined when the
 * original sent nothing of its own (an envelope webhook's, or a format that failed to render): the
 * replay is then made as any delivery of the webhook now is.
 */
function keptBody(original: DeliveryRecordRow, webhook: WebhookRow) {
  if (original.rendered) {
    return {
      body: original.payload,
      bodyHeaders: original.body_headers ?? { "Content-Type": "application/json" },
    };
  }
  if (original.request_timestamp !== null && webhook.format !== "envelope") {
    return { body: original.payload, bodyHeaders: { "Content-Type": "application/json" } };
  }
  return undefined;
}

/**
 * Replays a delivery (POST …/retry): its stored envelope, byte for byte, to the webhook's current URL
 * with its current secret, as a new attempt of the same event numbered one above the event's highest,
 * sent now and recorded before the outcome is returned.
 */
export async function replayDelivery(
  pool: Pool,
  engine: DeliveryEngine,
  webhook: WebhookRow,
  deliveryId: number,
): Promise<RetryResult> {
  const original = await findDeliveryRecord(pool, webhook.id, deliveryId);
  if (!original) throw deliveryNotFound(deliveryId, webhook.id);
  if (!webhook.enabled) {
    throw new ConflictError(`Webhook ${webhook.id} is disabled; enable it before retrying its deliveries.`);
  }
  // attempt_number = highest for this event and webhook + 1; two concurrent retries of the same
  // event collide on the unique key and the loser takes the next number.
  const stored = keptBody(original, webhook);
  let row: { id: number; attempt_number: number } | undefined;
  for (let race = 0; ; race++) {
    try {
      row = await insertLeasedDelivery(
        pool,
        {
          webhookId: webhook.id,
          eventId: original.event_id,
          eventType: original.event_type,
          attemptNumber: null,
          stored,
        },
        engine.lease,
      );
      break;
    } catch (error) {
      if (!isUniqueViolation(error) || race >= maxAttemptNumberRaces) throw error;
    }
  }
  if (!row) {
    // The webhook was deleted between being read and its delivery being written, or the event went.
    if (await eventExists(pool, original.event_id)) throw webhookNotFound(webhook.project_id, webhook.id);
    throw new GoneError(
      `The event of delivery ${deliveryId} (${original.event_id}) was removed by retention while it was being replayed; events older than RETENTION_DAYS are not kept.`,
    );
  }
  const outcome = await engine.sendLeased(webhook, {
    id: row.id,
    eventType: original.event_type,
    eventId: original.event_id,
    body: original.payload,
    stored,
  });
  metrics.replays.inc({ outcome: outcome.success ? "success" : "failure" });
  return retryResult(outcome, row);
}
