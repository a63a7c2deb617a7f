import { type Pool, withTransaction } from "../db/pool.js";
import { isUniqueViolation } from "../db/sqlstate.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { eventExists, insertLeasedDelivery } from "../delivery-engine/queue.js";
import type { DeliveryOutcome } from "../delivery-engine/sender.js";
import { ConflictError, GoneError } from "../errors.js";
import { metrics } from "../metrics.js";
import { webhookNotFound } from "../webhooks/service.js";
import type { WebhookRow } from "../webhooks/store.js";
import { deliveryNotFound } from "./not-found.js";
import { admitSynchronousSend } from "./send-admission.js";
import { type DeliveryRecordRow, findDeliveryRecord } from "./store.js";

/** A replay's answer (docs/api.md, "Deliveries"), with the new attempt's delivery record (clients link to it). */
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

async function insertWithNextNumber(
  pool: Pool,
  engine: DeliveryEngine,
  webhookId: number,
  original: { event_id: string; event_type: string },
  stored: KeptBody,
): Promise<{ id: number; attempt_number: number } | undefined> {
  for (let race = 0; ; race++) {
    try {
      return await insertReplayAttempt(pool, engine, webhookId, original, stored);
    } catch (error) {
      // Only an automatic retry queued at the same instant can take the number now (queue.ts); the
      // next try numbers above it.
      if (!isUniqueViolation(error) || race >= maxAttemptNumberRaces) throw error;
    }
  }
}

/**
 * The new attempt's row, numbered one above the event's highest attempt for this webhook. Replays of
 * one event take their numbers one after another: a lock on (webhook, event), held until the row is
 * committed, makes the next replay read the highest number after this one wrote it. Without it, every
 * replay running at once read the same highest number and all but one hit the unique index, again on
 * each try, so with more replays at once than tries some answered 500.
 */
async function insertReplayAttempt(
  pool: Pool,
  engine: DeliveryEngine,
  webhookId: number,
  original: { event_id: string; event_type: string },
  stored: KeptBody,
): Promise<{ id: number; attempt_number: number } | undefined> {
  return withTransaction(pool, async (client) => {
    // The two-key form: a key space apart from the single-key locks of retention and start-up.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1::text), hashtext($2))", [
      webhookId,
      original.event_id,
    ]);
    return insertLeasedDelivery(
      client,
      {
        webhookId,
        eventId: original.event_id,
        eventType: original.event_type,
        attemptNumber: null,
        stored,
      },
      engine.lease,
    );
  });
}

/**
 * The body a replay sends again, byte for byte with its Content-Type and format headers: the one the
 * original rendered, or the envelope it sent before its webhook chose a format. Undefined when the
 * original sent nothing of its own (an envelope webhook's, or a format that failed to render): the
 * replay is then made as any delivery of the webhook now is.
 */
type KeptBody = ReturnType<typeof keptBody>;

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
  const stored = keptBody(original, webhook);
  const slot = admitSynchronousSend(engine, webhook.project_id, webhook.id);
  let row: { id: number; attempt_number: number } | undefined;
  try {
    row = await insertWithNextNumber(pool, engine, webhook.id, original, stored);
  } catch (error) {
    slot.release();
    throw error;
  }
  if (!row) {
    slot.release();
    // The webhook was deleted between being read and its delivery being written, or the event went.
    if (await eventExists(pool, original.event_id)) throw webhookNotFound(webhook.project_id, webhook.id);
    throw new GoneError(
      `The event of delivery ${deliveryId} (${original.event_id}) was removed by retention while it was being replayed; events older than RETENTION_DAYS are not kept.`,
    );
  }
  const outcome = await engine.sendLeased(
    webhook,
    {
      id: row.id,
      eventType: original.event_type,
      eventId: original.event_id,
      body: original.payload,
      stored,
      rollout: original.rollout,
    },
    slot,
  );
  metrics.replays.inc({ outcome: outcome.success ? "success" : "failure" });
  return retryResult(outcome, row);
}
