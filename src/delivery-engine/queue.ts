import { arrayLiteral } from "../db/array-literal.js";
import type { Queryable } from "../db/pool.js";
import { metrics } from "../metrics.js";
import { type ClaimedDelivery, type ClaimRequest, claimStatement, claimValues } from "./claim.js";
import { deliveriesChannel } from "./emit.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import { type RecordedOutcome, recordStatement, recordValues } from "./record.js";

export type { ClaimedDelivery, ClaimRequest } from "./claim.js";
export type { RecordedOutcome } from "./record.js";

/**
 * Session settings of the connections that run the worker's statements (WorkerConnections, below).
 * - Its statements are prepared and planned once per connection, generically (force_generic_plan).
 *   Planning every execution (force_custom_plan, as before) was 70% of the engine's Postgres time at
 *   200 events/s: a claim is planned in ~0.3 ms and, at moderate rates, takes one row. Left to choose
 *   (auto), Postgres 18 settled on the generic plan after five executions and Postgres 15 never did.
 *   The claim keeps its plan quality under it on both versions (test/integration/claim-plans.test.ts
 *   counts the index entries read).
 * - Its claim reads the head of each webhook's unfinished rows in id order. When a backlog builds up faster
 *   than autovacuum refreshes the statistics, the planner believes the queue is tiny and picks a bitmap
 *   scan of the whole backlog plus a sort (measured: 5 ms instead of 0.3 ms per claim at 20k queued).
 *   Without bitmap scans it walks the index and stops at the limit.
 * - A plan made once must hold however the tables grow, and whatever the statistics said when it was
 *   made. Two cases made the claim read deliveries and events whole: statistics taken while a
 *   backlog was queued (autovacuum analyzes during a burst) estimate the claim's limit at a tenth
 *   of the queue, so a hash join over the whole table looked cheaper (measured: 6 ms per claim of 50 at
 *   20k queued, against 1 ms); tables that were empty when the plan was made (a new installation, until
 *   autovacuum analyzes) made every scan look free (ten claims read 62 million rows, 10 s, at
 *   5k queued). Without sequential scans, and with the claimed rows found by an id array (claim.sql),
 *   the plan is index lookups in every case (test/integration/claim-plans.test.ts).
 */
export const claimSessionSettings = {
  enable_bitmapscan: "off",
  enable_seqscan: "off",
  plan_cache_mode: "force_generic_plan",
};

/**
 * The worker's two connections (engine.ts). `outcomes` records finished attempts: its commits wait for
 * the disk, as every write of a fact does. `leases` claims, releases and pauses: its commits do not
 * (synchronous_commit off, leaseSessionSettings). Such a commit is visible to everyone at once and on
 * disk within three of Postgres's WAL writer delays (600 ms by default); a crash of Postgres (not of
 * this process) in between loses only leases, which puts rows back in the queue (sent again: at least
 * once), and a pause or a rate limit's tokens taken. An outcome is recorded only after its claim
 * committed, so its own wait for the disk takes the claim along. Waiting on both made a burst's turn
 * wait twice (docs/benchmarks.md, "One wait for the disk a turn").
 */
export interface WorkerConnections {
  outcomes: Queryable;
  leases: Queryable;
}

/** claimSessionSettings, and commits that do not wait for the disk (WorkerConnections). */
export const leaseSessionSettings = { ...claimSessionSettings, synchronous_commit: "off" };

/**
 * A worker's turn: records finished outcomes and what they set off (sql/record-outcomes.sql) and claims
 * up to `claim.limit` due deliveries (sql/claim.sql), each statement prepared once per connection. The
 * two run side by side, each on its connection of `db` and in a transaction of its own: a turn
 * waits for one round trip, not two, and the claim never shares a transaction with the record's locks
 * (the record waits for webhook rows in id order, the claim waits for nothing), so they cannot
 * deadlock. The claim leaves the rows being recorded alone. Should the record fail once the claim
 * succeeded, the claimed rows go back to the queue at once and the record's error is thrown (the worker
 * keeps the outcomes for its next turn).
 */
export async function recordAndClaim(
  db: WorkerConnections,
  workerId: string,
  outcomes: RecordedOutcome[],
  claim: ClaimRequest,
  policy: OutcomePolicy,
): Promise<ClaimedDelivery[]> {
  const recording = outcomes.length > 0 ? record(db.outcomes, outcomes, policy, true) : Promise.resolve();
  if (claim.limit <= 0) {
    await recording;
    return [];
  }
  const claiming = db.leases.query<ClaimedDelivery>({
    name: claimStatement.name,
    text: claimStatement.text,
    values: claimValues(
      workerId,
      claim,
      outcomes.map((o) => o.id),
    ),
  });
  const [recorded, claimed] = await Promise.allSettled([recording, claiming]);
  if (recorded.status === "rejected") {
    if (claimed.status === "fulfilled" && claimed.value.rows.length > 0)
      await releaseClaimsOf(
        db.leases,
        workerId,
        claimed.value.rows.map((row) => row.id),
      ).catch(() => {});
    throw recorded.reason;
  }
  if (claimed.status === "rejected") throw claimed.reason;
  return claimed.value.rows;
}

async function record(
  db: Queryable,
  outcomes: RecordedOutcome[],
  policy: OutcomePolicy,
  prepared: boolean,
): Promise<void> {
  const statement = { text: recordStatement.text, values: recordValues(outcomes, policy.disabledChannel) };
  const { rows } = await db.query<{ retries_scheduled: number; disabled_ids: number[] | null }>(
    prepared ? { name: recordStatement.name, ...statement } : statement,
  );
  const followUps = rows[0];
  if (followUps?.retries_scheduled) metrics.retriesScheduled.inc(followUps.retries_scheduled);
  if (followUps?.disabled_ids) policy.onDisabled(followUps.disabled_ids);
}

/** Writes outcomes outside a worker's turn (replays and test events), with what they set off. */
export async function recordOutcomes(
  db: Queryable,
  outcomes: RecordedOutcome[],
  policy: OutcomePolicy,
): Promise<void> {
  if (outcomes.length === 0) return;
  // Not prepared: these connections lack claimSessionSettings.
  await record(db, outcomes, policy, false);
}

/**
 * Hands claims back to the queue at once: rows a claim took beyond a new webhook's allowance, and rows
 * a worker held unsent for too long (worker.ts).
 */
export async function releaseClaimsOf(db: Queryable, workerId: string, ids: number[]): Promise<void> {
  await db.query(
    `UPDATE deliveries SET state = 'queued', locked_by = NULL, locked_until = NULL
      WHERE id = ANY ($1::bigint[]) AND locked_by = $2 AND delivered_at IS NULL`,
    [arrayLiteral(ids), workerId],
  );
}

/** Hands this worker's unfinished claims back to the queue (graceful shutdown). */
export async function releaseClaims(db: Queryable, workerId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE deliveries SET state = 'queued', locked_by = NULL, locked_until = NULL
      WHERE delivered_at IS NULL AND locked_by = $1 AND state = 'in_flight'`,
    [workerId],
  );
  return rowCount ?? 0;
}

/**
 * Inserts a delivery already leased to this worker, for the synchronous paths (replay, test events):
 * no queue worker picks it up, yet if this process dies mid-send the lease expires and a worker sends it.
 * A retry (attemptNumber null) is numbered one above the highest attempt of its event and webhook;
 * attempt 1 always exists (it is the row being retried or an earlier attempt of it), so only retries
 * need looking at, and they are indexed. Undefined when the webhook or the event no longer exists. Both
 * rows are locked FOR KEY SHARE until the caller's statement commits: a webhook deleted meanwhile takes
 * the new row along, and retention (retention/store.ts) skips the event instead of removing it.
 */
export async function insertLeasedDelivery(
  db: Queryable,
  delivery: {
    webhookId: number;
    eventId: string;
    eventType: string;
    attemptNumber: number | null;
    /** A body kept from an earlier attempt (replays), sent again should a worker take the row over. */
    stored?: { body: string; bodyHeaders: Record<string, string> } | undefined;
  },
  lease: { workerId: string; leaseMs: number },
): Promise<{ id: number; attempt_number: number } | undefined> {
  const { rows } = await db.query<{ id: number; attempt_number: number }>(
    `WITH webhook AS (SELECT id FROM webhooks WHERE id = $1 FOR KEY SHARE),
          event AS (SELECT id FROM events WHERE id = $2 FOR KEY SHARE)
     INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, state, locked_by, locked_until,
                             body, body_headers)
     SELECT webhook.id, event.id, $3,
            COALESCE($4, GREATEST(1, (SELECT max(attempt_number) FROM deliveries
                                       WHERE webhook_id = $1 AND event_id = $2 AND attempt_number > 1)) + 1),
            'in_flight', $5, clock_timestamp() + $6 * interval '1 millisecond', $7, $8::jsonb
       FROM webhook, event
     RETURNING id, attempt_number`,
    [
      delivery.webhookId,
      delivery.eventId,
      delivery.eventType,
      delivery.attemptNumber,
      lease.workerId,
      lease.leaseMs,
      delivery.stored?.body ?? null,
      delivery.stored ? JSON.stringify(delivery.stored.bodyHeaders) : null,
    ],
  );
  return rows[0];
}

export async function eventExists(db: Queryable, eventId: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM events WHERE id = $1", [eventId]);
  return rows.length > 0;
}

/** The queue as the metrics show it; automatic retries waiting for their time are counted apart. */
export async function queueStats(
  db: Queryable,
): Promise<{ depth: number; oldestAgeSeconds: number; retriesWaiting: number; throttledWebhooks: number }> {
  const { rows } = await db.query<{
    depth: number;
    oldest_age_seconds: number;
    retries_waiting: number;
    throttled_webhooks: number;
  }>(
    `SELECT count(*)::int AS depth,
            COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0)::float8 AS oldest_age_seconds,
            (SELECT count(*)::int FROM scheduled_retries) AS retries_waiting,
            (SELECT count(*)::int FROM webhooks WHERE throttled_until > clock_timestamp()) AS throttled_webhooks
       FROM deliveries WHERE delivered_at IS NULL`,
  );
  return {
    depth: rows[0]?.depth ?? 0,
    oldestAgeSeconds: rows[0]?.oldest_age_seconds ?? 0,
    retriesWaiting: rows[0]?.retries_waiting ?? 0,
    throttledWebhooks: rows[0]?.throttled_webhooks ?? 0,
  };
}

/**
 * Moves automatic retries whose time came from scheduled_retries into the queue (at most `limit`, the
 * longest due first), and wakes the workers of every replica when it queued any. Workers run it on
 * their poll tick, so a retry is queued within DELIVERY_POLL_INTERVAL_MS of its due time. SKIP LOCKED:
 * replicas doing the same take different rows. Each retry is numbered one above the event's highest
 * attempt now; it is dropped when that exceeds the webhook's current retry policy (turned off or
 * lowered meanwhile: the chain stops), when its webhook is gone, or when a manual retry takes the same
 * number at the same instant (the unique index of 003; the manual one is the retry then).
 */
export async function queueDueRetries(db: Queryable, limit: number): Promise<number> {
  const { rows } = await db.query<{ queued: number }>(
    `WITH due AS (
       SELECT id FROM scheduled_retries WHERE due_at <= clock_timestamp()
        ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED
     ), taken AS (
       DELETE FROM scheduled_retries s USING due WHERE s.id = due.id
       RETURNING s.webhook_id, s.event_id, s.event_type, s.attempt_number, s.rollout_id, s.rollout_position
     ), policies AS (
       SELECT id, retry_max_attempts FROM webhooks WHERE id IN (SELECT webhook_id FROM taken) FOR KEY SHARE
     ), queued AS (
       INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, rollout_id, rollout_position)
       SELECT t.webhook_id, t.event_id, t.event_type, n.attempt_number, t.rollout_id, t.rollout_position
         FROM taken t
         JOIN policies p ON p.id = t.webhook_id
        CROSS JOIN LATERAL (
          SELECT GREATEST(t.attempt_number - 1, (SELECT max(x.attempt_number) FROM deliveries x
                                                  WHERE x.webhook_id = t.webhook_id AND x.event_id = t.event_id
                                                    AND x.attempt_number > 1)) + 1 AS attempt_number
        ) n
        WHERE n.attempt_number <= p.retry_max_attempts
       ON CONFLICT (webhook_id, event_id, attempt_number) WHERE attempt_number > 1 DO NOTHING
       RETURNING id
     )
     SELECT count(*)::int AS queued, CASE WHEN count(*) > 0 THEN pg_notify($2, '') END::text AS notified
       FROM queued`,
    [limit, deliveriesChannel],
  );
  return rows[0]?.queued ?? 0;
}

/** An event recorded without queueing deliveries (test events, whose one delivery is sent at once). */
export async function insertEventRecord(
  db: Queryable,
  event: { id: string; projectId: number | null; eventType: string; body: string; createdAt: Date },
): Promise<void> {
  await db.query(
    "INSERT INTO events (id, project_id, event_type, envelope, created_at) VALUES ($1, $2, $3, $4, $5)",
    [event.id, event.projectId, event.eventType, event.body, event.createdAt],
  );
}
