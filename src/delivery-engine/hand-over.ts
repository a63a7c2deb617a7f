import { createHash } from "node:crypto";
import type { ClaimedDelivery } from "./claim.js";
import { type DeliveryShape, deliveryShapeSql } from "./delivery-shape.js";
import { filtersMatch } from "./event-filters.js";
import { earlierEventUnfinished } from "./rollout-order.js";
import type { StatementParams } from "./statement-params.js";

// The emit statement's variant that hands deliveries to the emitting process's own worker (emit.ts):
// at moderate rates each event otherwise costs a NOTIFY, a wake-up and a claim of one row, a
// transaction of its own (bench/delivery.ts). The rows are leased as a claim leases them, so nothing
// changes for the other replicas: they see in-flight rows, and take them over when the lease ends.

/**
 * What the local worker can take at once (engine.ts, handOverLease): its free slots and what each
 * webhook may be given now, so a hand-over never goes where a claim would not (receiver-limits.ts).
 */
export interface HandOver {
  workerId: string;
  leaseMs: number;
  /** The worker's free slots: an emit queueing more deliveries than this hands none over. */
  limit: number;
  /** Per known webhook, how many rows it may be given now (0 for a restricted one). */
  allowances: Map<number, number>;
  /** How many a webhook the worker has not seen may be given. */
  defaultAllowance: number;
  /** A boolean SQL expression over the webhook `w`: the outcome policy counts its outcomes. */
  countedBy: string;
}

/** One row per delivery the emit inserted; the send's columns only on the handed-over (in_flight) ones. */
export interface HandOverRow {
  id: number;
  webhook_id: number;
  event_id: string;
  event_type: string;
  attempt_number: number;
  rollout_id: number | null;
  state: "queued" | "in_flight";
  url: string | null;
  secret: string | null;
  retry_max_attempts: number | null;
  counted_by_policy: boolean | null;
  /** The webhook's shape without the event (filled in per delivery), null for an envelope webhook. */
  shape: DeliveryShape | null;
}

/** The webhooks' columns a send needs, read where the emit locks them. */
export const handOverColumns = (handOver: HandOver) =>
  `, w.url, w.secret, w.retry_max_attempts, ${handOver.countedBy} AS counted_by_policy,
   ${deliveryShapeSql("w", "NULL::text", "NULL::json")} AS shape,
   w.rate_limit_per_second IS NULL AND NOT COALESCE(w.throttled_until > clock_timestamp(), false) AS unpaced`;

/** A prepared statement's name stands for one text: the policy's expression is part of it. */
export const handOverStatementName = (handOver: HandOver) =>
  `emit-events-handing-over-${createHash("sha1").update(handOver.countedBy).digest("hex").slice(0, 8)}`;

/**
 * Follows the emit's `given`, `new_events` and `subscribed` CTEs with the hand-over's, adding its values
 * to `params`; `channel` is the placeholder of the NOTIFY channel the emit already added. `leased`: every
 * delivery of this emit fits the worker's free slots and each webhook's allowance, none goes to a webhook
 * with a rate limit or paused by its receiver (only the claim paces, pace.ts), and none would overtake
 * an earlier event of its rollout (rollout-order.ts: one still unfinished, or two events of one rollout
 * for one webhook in this emit, which a worker would send side by side); otherwise all are queued (and
 * NOTIFY wakes the workers) exactly as without a hand-over.
 */
export function handOverStatement(params: StatementParams, handOver: HandOver, channel: string): string {
  const worker = params.add(handOver.workerId, "text");
  const leaseMs = params.add(handOver.leaseMs, "float8");
  const limit = params.add(handOver.limit, "int");
  const allowanceIds = params.add([...handOver.allowances.keys()], "bigint[]");
  const allowances = params.add([...handOver.allowances.values()], "int[]");
  const defaultAllowance = params.add(handOver.defaultAllowance, "int");
  // Joins by nested loops over a handful of rows (OFFSET 0 keeps each subquery as written): planned
  // generically, the plain joins became hash joins and a hash aggregate, each building its hash table
  // anew on every emit for a row or two.
  return `
  targets AS (
    SELECT w.id AS webhook_id, g.id AS event_id, g.event_type, g.position, g.rollout_id, g.rollout_position
      FROM given g
     CROSS JOIN LATERAL (
       SELECT s.id FROM subscribed s
        WHERE s.project_id = g.project_id AND g.event_type = ANY (s.events) AND ${filtersMatch("s", "g")} OFFSET 0
     ) w
  ), lease AS (
    SELECT COALESCE(sum(p.n) <= ${limit} AND bool_and(p.n = 0 OR COALESCE(
             (${allowances})[array_position(${allowanceIds}, p.webhook_id)], ${defaultAllowance}) >= p.n), false) AS leased
      FROM (SELECT s.id AS webhook_id,
                   (SELECT count(*) FROM given g
                     WHERE g.project_id = s.project_id AND g.event_type = ANY (s.events)
                       AND ${filtersMatch("s", "g")}) AS n
              FROM subscribed s OFFSET 0) p
     WHERE NOT EXISTS (SELECT 1 FROM subscribed s WHERE NOT s.unpaced)
       AND NOT EXISTS (SELECT 1 FROM targets t WHERE ${earlierEventUnfinished("t")})
       AND NOT EXISTS (SELECT 1 FROM targets t WHERE t.rollout_id IS NOT NULL
                        GROUP BY t.webhook_id, t.rollout_id HAVING count(*) > 1)
  ), queued AS (
    INSERT INTO deliveries (webhook_id, event_id, event_type, state, locked_by, locked_until,
                            rollout_id, rollout_position)
    SELECT t.webhook_id, t.event_id, t.event_type,
           CASE WHEN l.leased THEN 'in_flight' ELSE 'queued' END,
           CASE WHEN l.leased THEN ${worker} END,
           CASE WHEN l.leased THEN clock_timestamp() + ${leaseMs} * interval '1 millisecond' END,
           t.rollout_id, t.rollout_position
      FROM targets t CROSS JOIN lease l
     ORDER BY t.position, t.webhook_id
    RETURNING id, webhook_id, event_id, event_type, attempt_number, state, rollout_id
  )
  -- A row per delivery, not one aggregate: fewer plan nodes to start and no JSON to build or parse.
  -- Postgres folds a transaction's identical notifications into one.
  SELECT q.id, q.webhook_id, q.event_id, q.event_type, q.attempt_number, q.state, q.rollout_id,
         CASE WHEN l.leased THEN w.url END AS url, CASE WHEN l.leased THEN w.secret END AS secret,
         CASE WHEN l.leased THEN w.retry_max_attempts END AS retry_max_attempts,
         CASE WHEN l.leased THEN w.counted_by_policy END AS counted_by_policy,
         CASE WHEN l.leased THEN w.shape END AS shape,
         CASE WHEN NOT l.leased THEN pg_notify(${channel}, '') END::text AS notified
    FROM queued q
   CROSS JOIN LATERAL (SELECT * FROM subscribed s WHERE s.id = q.webhook_id OFFSET 0) w
   CROSS JOIN lease l`;
}

/** The handed-over rows as the worker takes claimed ones, with the body each sends (by event id). */
export function handedOverDeliveries(
  rows: HandOverRow[],
  bodies: Map<string, string>,
  createdAt: Date,
): ClaimedDelivery[] {
  // In id order, the order they were queued in (a rollout's created before its ready).
  return rows
    .filter((row) => row.state === "in_flight")
    .sort((a, b) => a.id - b.id)
    .map((row) => ({
      id: row.id,
      webhook_id: row.webhook_id,
      event_type: row.event_type,
      attempt_number: row.attempt_number,
      rollout_id: row.rollout_id,
      pace_interval_ms: null,
      url: row.url as string,
      secret: row.secret,
      retry_max_attempts: row.retry_max_attempts,
      counted_by_policy: row.counted_by_policy as boolean,
      body: bodies.get(row.event_id) as string,
      event_created_ms: createdAt.getTime(),
      enabled: true,
      more_due: false,
      shape: row.shape === null ? null : { ...row.shape, event_id: row.event_id },
    }));
}
