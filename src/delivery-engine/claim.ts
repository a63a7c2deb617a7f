import { type DeliveryShape, deliveryShapeSql } from "./delivery-shape.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import { pacedCtes, pacedTaken } from "./pace.js";
import type { ClaimPlan } from "./receiver-limits.js";
import { earlierEventUnfinished } from "./rollout-order.js";
import type { StatementParams } from "./statement-params.js";

/** A delivery claimed by a worker, with what it needs to send it. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  event_type: string;
  url: string;
  secret: string | null;
  body: string;
  /** When the event was recorded, in ms since the epoch. */
  event_created_ms: number;
  attempt_number: number;
  /** The rollout its event belongs to (rollout-order.ts), null for none. */
  rollout_id: number | null;
  /** 1000 / the webhook's rate limit per second, null for a webhook without one (pace.ts). */
  pace_interval_ms: number | null;
  /** The webhook as the claim saw it: disabled webhooks' deliveries are not sent (README). */
  enabled: boolean;
  retry_max_attempts: number | null;
  /** Its outcomes are counted by the outcome policy (outcome-policy.ts). */
  counted_by_policy: boolean;
  /** True when a webhook had more due rows than this claim's share gave it: claim again. */
  more_due: boolean;
  /** Its format, signature scheme and headers; null for a webhook that chose none (delivery-shape.ts). */
  shape: DeliveryShape | null;
}

export interface ClaimRequest {
  limit: number;
  leaseMs: number;
  /** Per-webhook allowances and the restricted webhooks' shared budget (receiver-limits.ts). */
  plan: ClaimPlan;
}

/**
 * The CTEs that claim up to `limit` due deliveries, fairly: the slots are shared evenly across the
 * webhooks that have due rows, as fair queues do, those holding the fewest rows in this worker first. A
 * webhook that was never seen, one seen before a restart and one whose backlog is younger than everyone
 * else's get a turn in the same claim as the oldest backlog; nothing depends on which rows are oldest.
 *
 * - unfinished_webhooks: the distinct webhooks with unfinished rows, one index descent each (a loose
 *   index scan over deliveries_unfinished (webhook_id, id), migration 014), not a walk over their rows.
 * - gates, paced: the webhooks not paused by a receiver's Retry-After, and the tokens of those with a
 *   rate limit (pace.ts).
 * - eligible: those a row may go to: within their allowance and their rate limit's tokens (known webhooks' as learnt, $default for one
 *   this worker has not seen), restricted ones only while the restricted budget lasts.
 * - shares: the claim's rows split evenly across them, the one left over going to the webhooks holding
 *   the fewest, no webhook past its allowance: a claim reads about as many rows as it takes, however
 *   many webhooks have due rows (at most one row each for more webhooks than the claim has rows).
 * - candidates: each webhook's oldest due rows, as many as its share, locked as they are read (SKIP
 *   LOCKED: rows other workers are claiming are passed over, not waited for). A webhook that had more
 *   due rows than its share says so (`cut`). A row whose rollout has an earlier event unfinished for the
 *   same webhook is passed over (rollout-order.ts), and the worker claims again at once (a restricted one is
 *   held back by the budget, which the worker knows of).
 * - chosen: all of them, restricted webhooks' rows no further than the budget, round by round. Rows
 *   read but not chosen stay locked only until the statement commits.
 * - claimed: leased, looked up by an id array computed first rather than joined: a plan made once must
 *   not depend on how many rows it expects (claimSessionSettings, queue.ts).
 *
 * Due rows are the queued ones and in-flight ones whose lease expired (their worker died). `excludedIds`
 * (a bigint[] expression) are rows the same statement records: its snapshot still sees them in flight,
 * and one whose lease ran out would otherwise be claimed while its outcome is written. Only rows whose
 * lease ran out are compared with them (a queued row is never being recorded).
 */
export function claimCtes(
  params: StatementParams,
  workerId: string,
  claim: ClaimRequest,
  excludedIds: string,
  /** The statement holds the follow-ups' `policies` CTE (follow-ups.ts). */
  followUps = false,
): string {
  const known = [...claim.plan.allowances];
  const held = claim.plan.held ?? new Map<number, number>();
  const worker = params.add(workerId, "text");
  const limit = params.add(claim.limit, "int");
  const leaseMs = params.add(claim.leaseMs, "float8");
  const knownIds = params.add(
    known.map(([id]) => id),
    "bigint[]",
  );
  const allowances = params.add(
    known.map(([, a]) => a.allowance),
    "int[]",
  );
  const restricted = params.add(
    known.map(([, a]) => a.restricted),
    "boolean[]",
  );
  const heldRows = params.add(
    known.map(([id]) => held.get(id) ?? 0),
    "int[]",
  );
  const defaultAllowance = params.add(claim.plan.defaultAllowance, "int");
  const budget = params.add(claim.plan.restrictedBudget, "int");
  return `
  unfinished_webhooks (webhook_id) AS (
    SELECT min(webhook_id) FROM deliveries WHERE delivered_at IS NULL AND ${limit} > 0
    UNION ALL
    SELECT (SELECT min(d.webhook_id) FROM deliveries d WHERE d.delivered_at IS NULL AND d.webhook_id > u.webhook_id)
      FROM unfinished_webhooks u WHERE u.webhook_id IS NOT NULL
  ), ${pacedCtes(followUps)}, eligible AS (
    SELECT g.webhook_id, LEAST(COALESCE(a.allowance, ${defaultAllowance}), floor(p.tokens)::int) AS allowance,
           COALESCE(a.held, 0) AS held, COALESCE(a.restricted, false) AS restricted
      FROM gates g
      LEFT JOIN paced p ON p.webhook_id = g.webhook_id
      LEFT JOIN unnest(${knownIds}, ${allowances}, ${restricted}, ${heldRows}) AS a (webhook_id, allowance, restricted, held)
        ON a.webhook_id = g.webhook_id
     WHERE (NOT g.paced OR p.webhook_id IS NOT NULL)
       AND LEAST(COALESCE(a.allowance, ${defaultAllowance}), floor(p.tokens)::int) > 0
       AND (NOT COALESCE(a.restricted, false) OR ${budget} > 0)
  ), shares AS (
    SELECT e.*, LEAST(e.allowance, ${limit} / e.webhooks + (e.rank <= ${limit} % e.webhooks)::int,
                      CASE WHEN e.restricted THEN ${budget} END) AS share
      FROM (
        SELECT eligible.*, row_number() OVER (ORDER BY held, webhook_id) AS rank, count(*) OVER () AS webhooks
          FROM eligible
      ) e
  ), candidates AS (
    SELECT c.id, c.nth, s.restricted, NOT s.restricted AND c.nth = s.share AND s.share < s.allowance AS cut
      FROM shares s
     CROSS JOIN LATERAL (
       SELECT l.id, row_number() OVER (ORDER BY l.id) AS nth FROM (
         SELECT d.id FROM deliveries d
          WHERE d.webhook_id = s.webhook_id AND d.delivered_at IS NULL
            AND (d.state = 'queued' OR (d.locked_until < clock_timestamp() AND d.id <> ALL (${excludedIds})))
            AND NOT ${earlierEventUnfinished("d")}
          ORDER BY d.id
          LIMIT s.share
            FOR UPDATE SKIP LOCKED
       ) l
     ) c
     WHERE s.share > 0
  ), chosen AS (
    SELECT id FROM candidates WHERE NOT restricted
    UNION ALL
    (SELECT id FROM candidates WHERE restricted ORDER BY nth, id LIMIT ${budget})
  ), claimed AS (
    UPDATE deliveries d
       SET state = 'in_flight', locked_by = ${worker},
           locked_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond'
     WHERE d.id = ANY (ARRAY(SELECT id FROM chosen))
    RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number, d.rollout_id,
              CASE WHEN d.body IS NOT NULL OR d.body_headers IS NOT NULL
                   THEN json_build_object('body', d.body, 'body_headers', d.body_headers) END AS stored
  ), ${pacedTaken}`;
}

/** The claimed rows with what a send needs, and whether a webhook's share left due rows behind. */
export const claimedWithSendDetails = (policy: OutcomePolicy) => `
  SELECT c.id, c.webhook_id, c.event_type, w.url, w.secret, e.envelope AS body,
         EXTRACT(EPOCH FROM e.created_at)::float8 * 1000 AS event_created_ms, c.attempt_number,
         c.rollout_id, 1000 / w.rate_limit_per_second AS pace_interval_ms,
         w.enabled, w.retry_max_attempts, ${policy.appliesTo} AS counted_by_policy,
         EXISTS (SELECT 1 FROM candidates WHERE cut) AS more_due,
         ${deliveryShapeSql("w", "c.event_id", "c.stored")} AS shape
    FROM claimed c
    JOIN webhooks w ON w.id = c.webhook_id
    JOIN events e ON e.id = c.event_id
   ORDER BY c.id`;
