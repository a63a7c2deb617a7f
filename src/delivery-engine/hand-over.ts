import { createHash } from "node:crypto";
import type { ClaimedDelivery } from "./claim.js";
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

export interface HandOverResult {
  queued: number;
  handed_over: Array<Omit<ClaimedDelivery, "body" | "event_created_ms"> & { event_id: string }> | null;
}

/** The webhooks' columns a send needs, read where the emit locks them. */
export const handOverColumns = (handOver: HandOver) =>
  `, w.url, w.secret, w.retry_max_attempts, ${handOver.countedBy} AS counted_by_policy`;

/** A prepared statement's name stands for one text: the policy's expression is part of it. */
export const handOverStatementName = (handOver: HandOver) =>
  `emit-events-handing-over-${createHash("sha1").update(handOver.countedBy).digest("hex").slice(0, 8)}`;

/**
 * Follows the emit's `given`, `new_events` and `subscribed` CTEs with the hand-over's, adding its values
 * to `params`; `channel` is the placeholder of the NOTIFY channel the emit already added. `leased`: every delivery of this emit fits the worker's free slots and each webhook's
 * allowance; otherwise all are queued (and NOTIFY wakes the workers) exactly as without a hand-over.
 */
export function handOverStatement(params: StatementParams, handOver: HandOver, channel: string): string {
  const worker = params.add(handOver.workerId, "text");
  const leaseMs = params.add(handOver.leaseMs, "float8");
  const limit = params.add(handOver.limit, "int");
  const allowanceIds = params.add([...handOver.allowances.keys()], "bigint[]");
  const allowances = params.add([...handOver.allowances.values()], "int[]");
  const defaultAllowance = params.add(handOver.defaultAllowance, "int");
  return `
  targets AS (
    SELECT w.id AS webhook_id, g.id AS event_id, g.event_type, g.position
      FROM given g
      JOIN subscribed w ON w.project_id = g.project_id AND g.event_type = ANY (w.events)
  ), lease AS (
    SELECT COALESCE(sum(p.n) <= ${limit} AND bool_and(COALESCE(a.allowance, ${defaultAllowance}) >= p.n), false) AS leased
      FROM (SELECT webhook_id, count(*) AS n FROM targets GROUP BY webhook_id) p
      LEFT JOIN unnest(${allowanceIds}, ${allowances}) AS a (webhook_id, allowance) ON a.webhook_id = p.webhook_id
  ), queued AS (
    INSERT INTO deliveries (webhook_id, event_id, event_type, state, locked_by, locked_until)
    SELECT t.webhook_id, t.event_id, t.event_type,
           CASE WHEN l.leased THEN 'in_flight' ELSE 'queued' END,
           CASE WHEN l.leased THEN ${worker} END,
           CASE WHEN l.leased THEN clock_timestamp() + ${leaseMs} * interval '1 millisecond' END
      FROM targets t CROSS JOIN lease l
     ORDER BY t.position, t.webhook_id
    RETURNING id, webhook_id, event_id, event_type, attempt_number, state
  )
  SELECT (SELECT count(*) FROM queued)::int AS queued,
         CASE WHEN EXISTS (SELECT 1 FROM queued WHERE state = 'queued') THEN pg_notify(${channel}, '') END::text AS notified,
         (SELECT json_agg(json_build_object(
                   'id', q.id, 'webhook_id', q.webhook_id, 'event_id', q.event_id, 'event_type', q.event_type,
                   'attempt_number', q.attempt_number, 'url', w.url, 'secret', w.secret,
                   'retry_max_attempts', w.retry_max_attempts, 'counted_by_policy', w.counted_by_policy)
                 ORDER BY q.id)
            FROM queued q JOIN subscribed w ON w.id = q.webhook_id
           WHERE q.state = 'in_flight') AS handed_over`;
}

/** The handed-over rows as the worker takes claimed ones, with the body each sends (by event id). */
export function handedOverDeliveries(
  result: HandOverResult,
  bodies: Map<string, string>,
  createdAt: Date,
): ClaimedDelivery[] {
  return (result.handed_over ?? []).map(({ event_id, ...row }) => ({
    ...row,
    body: bodies.get(event_id) as string,
    event_created_ms: createdAt.getTime(),
    enabled: true,
    more_due: false,
  }));
}
