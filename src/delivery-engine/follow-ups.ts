import { arrayLiteral } from "../db/array-literal.js";
import type { RecordedOutcome } from "./record.js";
import type { StatementParams } from "./statement-params.js";

// What a recorded outcome sets off for a webhook with an opt-in policy (README, "Retry policy and
// auto-disable"): the next attempt of a failed delivery, and the webhook's run of failures, which may
// disable it. These CTEs join the worker's record-and-claim statement only in its follow-up variant
// (queue.ts), chosen when a batch holds such an outcome, so the statement most turns run (no policy
// anywhere) is planned and executed exactly as before. Being part of the statement that records the
// failure, a retry is durable the moment the failure is: no crash between the two can lose it.

/**
 * The columns the follow-up variant's `recorded` CTE returns (record.ts): each outcome's wait before its
 * retry and whether it counts toward auto-disable, found by the outcome's position in `ids`.
 */
export const recordedForFollowUps =
  (params: StatementParams, outcomes: RecordedOutcome[]) =>
  (ids: string): string => {
    const retryIn = params.add(arrayLiteral(outcomes.map((o) => o.retryInMs ?? null)), "float8[]");
    const counts = params.add(
      arrayLiteral(outcomes.map((o) => (o.countsTowardAutoDisable ? "t" : "f"))),
      "boolean[]",
    );
    return `
  d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number, d.success, d.delivered_at,
  (${retryIn})[array_position(${ids}, d.id)] AS retry_in_ms,
  COALESCE((${counts})[array_position(${ids}, d.id)], false) AS counts`;
  };

// consecutive_failures and failing_since after this batch, per webhook: a success in the batch restarts
// the run (only failures after the batch's last success count), otherwise the batch's failures extend it.
const failuresAfter = `CASE WHEN t.last_success IS NULL THEN w.consecutive_failures ELSE 0 END + t.failures`;
const failingSince = `CASE WHEN t.failures = 0 THEN NULL
       WHEN t.last_success IS NULL AND w.consecutive_failures > 0 THEN COALESCE(w.failing_since, t.first_failure)
       ELSE t.first_failure END`;
const reachesLimit = `w.enabled AND ${failuresAfter} >= w.auto_disable_after_failures
       AND ${failingSince} <= clock_timestamp() - w.auto_disable_min_seconds * interval '1 second'`;

/**
 * - policies: the webhooks of the recorded outcomes, locked in id order (two workers' statements never
 *   wait on each other in opposite orders). The lock also keeps a webhook from being deleted under a
 *   retry being inserted, as FOR KEY SHARE does for every other writer of deliveries (migration 003).
 * - retried: the next attempt of each failed one whose webhook (still enabled) allows it, one above the
 *   event's highest attempt, waiting in scheduled_retries (migration 011 says why not in deliveries)
 *   until queueDueRetries (queue.ts) queues it.
 * - counted/disabled: the run of failures of webhooks with auto-disable on; a webhook whose run reached
 *   after_failures and lasted min_duration_seconds is disabled, with the reason recorded.
 */
export const followUpCtes = `
  policies AS (
    SELECT w.id, w.enabled, w.retry_max_attempts FROM webhooks w
     WHERE w.id IN (SELECT webhook_id FROM recorded)
     ORDER BY w.id
       FOR NO KEY UPDATE
  ), last_successes AS (
    SELECT webhook_id, max(delivered_at) FILTER (WHERE success) AS last_success
      FROM recorded WHERE counts GROUP BY webhook_id
  ), tallies AS (
    SELECT r.webhook_id, s.last_success,
           count(*) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity'))::int AS failures,
           min(r.delivered_at) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity')) AS first_failure
      FROM recorded r JOIN last_successes s USING (webhook_id)
     WHERE r.counts
     GROUP BY r.webhook_id, s.last_success
  ), counted AS (
    UPDATE webhooks w
       SET consecutive_failures = ${failuresAfter},
           failing_since = ${failingSince},
           enabled = w.enabled AND NOT (${reachesLimit}),
           disabled_reason = CASE WHEN ${reachesLimit} THEN format(
             'Disabled automatically: %s deliveries in a row failed since %s (auto_disable: after %s failures over at least %s s). Enable the webhook again once its receiver works.',
             ${failuresAfter}, to_char((${failingSince}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             w.auto_disable_after_failures, w.auto_disable_min_seconds) ELSE w.disabled_reason END,
           disabled_at = CASE WHEN ${reachesLimit} THEN clock_timestamp() ELSE w.disabled_at END,
           updated_at = CASE WHEN ${reachesLimit}
                             THEN greatest(clock_timestamp(), w.updated_at + interval '1 millisecond')
                             ELSE w.updated_at END
      FROM tallies t
      JOIN policies p ON p.id = t.webhook_id -- rows locked in id order first
     WHERE w.id = t.webhook_id AND w.auto_disable_after_failures IS NOT NULL
       AND (t.failures > 0 OR w.consecutive_failures > 0)
    RETURNING w.id, w.enabled
  ), retried AS (
    INSERT INTO scheduled_retries (webhook_id, event_id, event_type, attempt_number, due_at)
    SELECT r.webhook_id, r.event_id, r.event_type, n.attempt_number,
           clock_timestamp() + r.retry_in_ms * interval '1 millisecond'
      FROM recorded r
      JOIN policies p ON p.id = r.webhook_id
     CROSS JOIN LATERAL (
       SELECT GREATEST(r.attempt_number, (SELECT max(x.attempt_number) FROM deliveries x
                                           WHERE x.webhook_id = r.webhook_id AND x.event_id = r.event_id
                                             AND x.attempt_number > 1)) + 1 AS attempt_number
     ) n
     WHERE NOT r.success AND r.retry_in_ms IS NOT NULL AND p.enabled
       AND n.attempt_number <= p.retry_max_attempts
       -- not for a webhook this very batch disabled: its retry would never be sent
       AND NOT EXISTS (SELECT 1 FROM counted c WHERE c.id = r.webhook_id AND NOT c.enabled)
     ORDER BY r.id
    ON CONFLICT (webhook_id, event_id, attempt_number) DO NOTHING
    RETURNING id
  ), follow_ups AS (
    SELECT (SELECT count(*) FROM retried)::int AS retries_scheduled,
           (SELECT array_agg(id ORDER BY id) FROM counted WHERE NOT enabled AND id IN (
              SELECT id FROM policies WHERE enabled)) AS disabled_ids
  )`;

/** The variant's result: every claimed row (if any) next to the follow-ups, which come once. */
export const withFollowUps = (claimed: string, channel: string) => `
  SELECT s.*, f.retries_scheduled, f.disabled_ids,
         CASE WHEN f.disabled_ids IS NOT NULL THEN pg_notify('${channel}', array_to_string(f.disabled_ids, ',')) END AS notified
    FROM follow_ups f
    LEFT JOIN (${claimed}) s ON true
   ORDER BY s.id`;
