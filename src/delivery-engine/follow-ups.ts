import { arrayLiteral } from "../db/array-literal.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import type { RecordedOutcome } from "./record.js";
import type { StatementParams } from "./statement-params.js";

// What a recorded outcome sets off for a webhook with an opt-in policy (docs/deliveries.md, "Retry policy
// and auto-disable"): the next attempt of a failed delivery, and whatever the outcome policy decides
// (outcome-policy.ts). These CTEs join the worker's record-and-claim statement only in its follow-up
// variant (queue.ts), chosen when a batch holds such an outcome, so the statement most turns run (no
// policy anywhere) is planned and executed exactly as before. Being part of the statement that records
// the failure, a retry is durable the moment the failure is: no crash between the two can lose it.

/**
 * The columns the follow-up variant's `recorded` CTE returns (record.ts): each outcome's wait before its
 * retry and whether the outcome policy counts it, found by the outcome's position in `ids`.
 */
export const recordedForFollowUps =
  (params: StatementParams, outcomes: RecordedOutcome[]) =>
  (ids: string): string => {
    const retryIn = params.add(arrayLiteral(outcomes.map((o) => o.retryInMs ?? null)), "float8[]");
    const counted = params.add(
      arrayLiteral(outcomes.map((o) => (o.countedByPolicy ? "t" : "f"))),
      "boolean[]",
    );
    return `
  d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number, d.success, d.delivered_at, d.status_code,
  d.rollout_id, d.rollout_position,
  (${retryIn})[array_position(${ids}, d.id)] AS retry_in_ms,
  COALESCE((${counted})[array_position(${ids}, d.id)], false) AS counted`;
  };

/**
 * - policies: the webhooks of the recorded outcomes, locked in id order (two workers' statements never
 *   wait on each other in opposite orders). The lock also keeps a webhook from being deleted under a
 *   retry being inserted, as FOR KEY SHARE does for every other writer of deliveries (migration 003).
 * - the outcome policy's CTEs, which end with `disabled`: the webhooks it disabled just now.
 * - retried: the next attempt of each failed one whose webhook (still enabled) allows it, one above the
 *   event's highest attempt, waiting in scheduled_retries (migration 011 says why not in deliveries)
 *   until queueDueRetries (queue.ts) queues it.
 */
export const followUpCtes = (policy: OutcomePolicy) => `
  policies AS (
    SELECT w.id, w.enabled, w.retry_max_attempts FROM webhooks w
     WHERE w.id IN (SELECT webhook_id FROM recorded)
     ORDER BY w.id
       FOR NO KEY UPDATE
  ), ${policy.ctes}, retried AS (
    INSERT INTO scheduled_retries (webhook_id, event_id, event_type, attempt_number, due_at,
                                   rollout_id, rollout_position)
    SELECT r.webhook_id, r.event_id, r.event_type, n.attempt_number,
           clock_timestamp() + r.retry_in_ms * interval '1 millisecond', r.rollout_id, r.rollout_position
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
       AND r.webhook_id NOT IN (SELECT id FROM disabled)
     ORDER BY r.id
    ON CONFLICT (webhook_id, event_id, attempt_number) DO NOTHING
    RETURNING id
  ), follow_ups AS (
    SELECT (SELECT count(*) FROM retried)::int AS retries_scheduled,
           (SELECT array_agg(id ORDER BY id) FROM disabled) AS disabled_ids
  )`;

/** The variant's result: every claimed row (if any) next to the follow-ups, which come once. */
export const withFollowUps = (claimed: string, policy: OutcomePolicy) => `
  SELECT s.*, f.retries_scheduled, f.disabled_ids,
         CASE WHEN f.disabled_ids IS NOT NULL THEN pg_notify('${policy.disabledChannel}', array_to_string(f.disabled_ids, ',')) END AS notified
    FROM follow_ups f
    LEFT JOIN (${claimed}) s ON true
   ORDER BY s.id`;
