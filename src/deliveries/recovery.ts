import type { Queryable } from "../db/pool.js";
import { deliveriesChannel } from "../delivery-engine/emit.js";

/** How many events one recovery queues at most; a second call queues the rest (the first's are skipped). */
export const recoveryLimit = 10_000;

export interface RecoveryWindow {
  since: Date;
  until: Date;
  eventType: string | undefined;
}

/**
 * Queues one new attempt of every event of the webhook whose latest attempt failed, among the events
 * with a failed attempt created in [since, until) (of `eventType` only, when given), oldest first, in
 * one statement; the workers of every replica are woken when it commits. Returns how many were queued.
 *
 * - The latest attempt is looked up among every attempt since `since`, so a success after `until`
 *   excludes the event too. Attempts are read from the by-webhook index, failures from theirs (005).
 * - An event that already has an attempt queued, in flight or waiting as an automatic retry is not
 *   queued again: pressing recover twice sends nothing twice.
 * - Each new attempt is numbered one above the event's highest, as a replay's is; one that
 *   meets a replay of the same event taking that number at the same moment is left out.
 * - The webhook is locked FOR KEY SHARE (a delete meanwhile takes the new rows along) and so are the
 *   events (retention skips them rather than remove an envelope a new attempt will send). A webhook
 *   disabled or gone queues nothing.
 */
export async function queueRecovery(
  db: Queryable,
  webhookId: number,
  window: RecoveryWindow,
): Promise<number> {
  const { rows } = await db.query<{ queued: number }>(
    `WITH webhook AS (
       SELECT id FROM webhooks WHERE id = $1 AND enabled FOR KEY SHARE
     ), failed_in_window AS (
       SELECT DISTINCT event_id FROM deliveries
        WHERE webhook_id = $1 AND delivered_at IS NOT NULL AND success = false
          AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR event_type = $4)
     ), latest AS (
       SELECT DISTINCT ON (d.event_id) d.event_id, d.event_type, d.success, d.created_at
         FROM deliveries d
        WHERE d.webhook_id = $1 AND d.delivered_at IS NOT NULL AND d.created_at >= $2
          AND d.event_id IN (SELECT event_id FROM failed_in_window)
        ORDER BY d.event_id, d.created_at DESC, d.id DESC
     ), chosen AS (
       SELECT l.event_id, l.event_type, l.created_at FROM latest l
        WHERE NOT l.success
          AND l.event_id NOT IN (SELECT event_id FROM deliveries WHERE delivered_at IS NULL AND webhook_id = $1)
          AND l.event_id NOT IN (SELECT event_id FROM scheduled_retries WHERE webhook_id = $1)
        ORDER BY l.created_at
        LIMIT $5
     ), kept_events AS (
       SELECT id FROM events WHERE id IN (SELECT event_id FROM chosen) FOR KEY SHARE
     ), queued AS (
       INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number)
       SELECT webhook.id, c.event_id, c.event_type,
              GREATEST(1, (SELECT max(attempt_number) FROM deliveries
                            WHERE webhook_id = $1 AND event_id = c.event_id AND attempt_number > 1)) + 1
         FROM chosen c
         JOIN kept_events k ON k.id = c.event_id
        CROSS JOIN webhook
        ORDER BY c.created_at
       ON CONFLICT (webhook_id, event_id, attempt_number) WHERE attempt_number > 1 DO NOTHING
       RETURNING id
     )
     SELECT count(*)::int AS queued, CASE WHEN count(*) > 0 THEN pg_notify($6, '') END::text AS notified
       FROM queued`,
    [webhookId, window.since, window.until, window.eventType ?? null, recoveryLimit, deliveriesChannel],
  );
  return rows[0]?.queued ?? 0;
}
