import { arrayLiteral } from "../db/array-literal.js";
import type { Queryable } from "../db/pool.js";
import { metrics } from "../metrics.js";
import { deliveriesChannel } from "./emit.js";
import { followUpCtes, recordedForFollowUps, withFollowUps } from "./follow-ups.js";
import type { ClaimPlan } from "./receiver-limits.js";
import type { DeliveryOutcome } from "./sender.js";

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
  /** The webhook as the claim saw it: disabled webhooks' deliveries are not sent (README). */
  enabled: boolean;
  retry_max_attempts: number | null;
  auto_disable: boolean;
}

export interface RecordedOutcome {
  id: number;
  outcome: DeliveryOutcome;
  /** When the outcome was known, in ms since the epoch. */
  deliveredAtMs: number;
  /** A failed attempt of a webhook with a retry policy: schedule the next attempt this much later. */
  retryInMs?: number | null;
  /** A real attempt of a webhook with auto-disable on: it counts toward (or resets) its failures. */
  countsTowardAutoDisable?: boolean;
}

/** Postgres NOTIFY channel naming the webhooks a worker just disabled automatically (ids, comma-separated). */
export const webhooksDisabledChannel = "webhook_operator_webhooks_disabled";

export interface ClaimRequest {
  limit: number;
  leaseMs: number;
  /** Per-webhook allowances and the restricted webhooks' shared budget (receiver-limits.ts). */
  plan: ClaimPlan;
}

// One statement does a worker's whole round trip: record the outcomes that finished, then claim what
// is due for the slots now free. Both parts are described where they happen.
//
// recorded: an outcome is written whoever holds the row's lease now, unless the row already has one.
//   An attempt that finished is a fact: when a lease ran out (a database outage, a stalled process)
//   and another worker sent the row again, the first outcome recorded stands and the later one is
//   dropped (the receiver saw the same delivery twice, which at-least-once allows). Each row finds
//   its outcome by its position in the id array rather than by joining an unnest: the filter is
//   estimated at ~1 row, and with that estimate the planner joins by rescanning the unnest per row.
//   The timestamp and signature sent and the attempt's duration come in parameters `headers` to
//   `headers + 2`, numbered after the claim's own (Postgres refuses a statement whose parameter numbers
//   have a gap).
const recordedCte = (headers: number, returning = "d.id") => `
  recorded AS (
    UPDATE deliveries d
       SET state = 'done', success = ($3::boolean[])[array_position($2::bigint[], d.id)],
           request_timestamp = ($${headers}::bigint[])[array_position($2::bigint[], d.id)],
           signature = ($${headers + 1}::text[])[array_position($2::bigint[], d.id)],
           duration_ms = ($${headers + 2}::int[])[array_position($2::bigint[], d.id)],
           status_code = ($4::int[])[array_position($2::bigint[], d.id)],
           response_body = ($5::text[])[array_position($2::bigint[], d.id)],
           error_message = ($6::text[])[array_position($2::bigint[], d.id)],
           delivered_at = to_timestamp(($7::float8[])[array_position($2::bigint[], d.id)] / 1000),
           locked_by = NULL, locked_until = NULL
     WHERE d.id = ANY ($2::bigint[]) AND d.delivered_at IS NULL
    RETURNING ${returning}
  )`;

// Due rows are the queued ones and in-flight ones whose lease expired (their worker died), oldest
// first. SKIP LOCKED lets every replica's workers claim concurrently without waiting on each other.
// The rows being recorded are excluded by id: this statement's snapshot still sees them unfinished,
// and one whose lease ran out would otherwise be claimed here, its recording skipped (a row is
// updated once per statement) and the outcome lost while the delivery went out again.
const dueRows = `delivered_at IS NULL AND (state = 'queued' OR locked_until < clock_timestamp())
  AND NOT (id = ANY ($2::bigint[]))`;
// The rows to claim are looked up by an id array computed first, not joined: a plan made once must
// not depend on how many rows it expects to claim (claimSessionSettings).
const claimedCte = (from: string) => `
  claimed AS (
    UPDATE deliveries d
       SET state = 'in_flight', locked_by = $1, locked_until = clock_timestamp() + $9 * interval '1 millisecond'
     WHERE d.id = ANY (ARRAY(${from}))
    RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number
  )`;
const claimedWithSendDetails = `
  SELECT c.id, c.webhook_id, c.event_type, w.url, w.secret, e.envelope AS body,
         EXTRACT(EPOCH FROM e.created_at)::float8 * 1000 AS event_created_ms, c.attempt_number,
         w.enabled, w.retry_max_attempts, w.auto_disable_after_failures IS NOT NULL AS auto_disable
    FROM claimed c
    JOIN webhooks w ON w.id = c.webhook_id
    JOIN events e ON e.id = c.event_id
   ORDER BY c.id`;

/** The claim when no webhook can reach its cap: the oldest $8 due rows. */
const plainClaim = claimedCte(
  `SELECT id FROM deliveries WHERE ${dueRows} ORDER BY id LIMIT $8 FOR UPDATE SKIP LOCKED`,
);
const recordAndClaimSql = `
  WITH ${recordedCte(10)},
  ${plainClaim}
  ${claimedWithSendDetails}`;

// The claim when a limit can bind (receiver-limits.ts): no webhook gets more than its allowance ($11,
// per id in $10; $12 for a webhook this worker has not seen), and restricted webhooks (flag $15)
// get no more than $16 rows together, so receivers that hang cannot take every slot.
// Candidates skip webhooks with no allowance left ($13) and, once the restricted budget is spent, take
// only the webhooks in $14: otherwise old rows of hanging receivers would fill the candidate window and
// starve everyone else. Candidates are counted per webhook, then locked; the locked re-check drops
// rows another worker claimed meanwhile. The rows to lock are looked up by id from an array computed
// once: joined instead, statistics taken while the queue was empty (the estimate is then 1 row on each
// side) made the planner rescan the chosen ids once per unfinished row (measured: 320 ms per claim
// with 20k queued, against 2 ms).
const cappedClaim = `candidates AS (
    SELECT id, webhook_id FROM deliveries
     WHERE ${dueRows} AND webhook_id <> ALL ($13::bigint[])
       AND ($14::bigint[] IS NULL OR webhook_id = ANY ($14::bigint[]))
     ORDER BY id
     LIMIT $8 * 2
  ), allowed AS (
    SELECT c.id,
           row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.id) <= COALESCE(a.allowance, $12) AS fits,
           COALESCE(a.restricted, false) AS restricted
      FROM candidates c
      LEFT JOIN unnest($10::bigint[], $11::int[], $15::boolean[]) AS a (webhook_id, allowance, restricted)
        ON a.webhook_id = c.webhook_id
  ), within_limits AS (
    SELECT r.id FROM (
      SELECT id, restricted, row_number() OVER (PARTITION BY restricted ORDER BY id) AS rank
        FROM allowed WHERE fits
    ) r
     WHERE NOT r.restricted OR r.rank <= $16
     ORDER BY r.id
     LIMIT $8
  ), due AS (
    SELECT d.id FROM deliveries d
     WHERE d.id = ANY (ARRAY(SELECT id FROM within_limits)) AND ${dueRows}
       FOR UPDATE OF d SKIP LOCKED
  ),
  ${claimedCte("SELECT id FROM due")}`;
const recordAndClaimCappedSql = `
  WITH ${recordedCte(17)}, ${cappedClaim}
  ${claimedWithSendDetails}`;

// The follow-up variants (follow-ups.ts): the same record and claim, plus a failed attempt's retry and
// the auto-disable count, for a batch that holds an outcome of a webhook with such a policy. Their
// per-outcome arrays come after the parameters of the statement they extend.
const recordAndClaimFollowUpsSql = `
  WITH ${recordedCte(10, recordedForFollowUps(13, 14))}, ${followUpCtes},
  ${plainClaim}
  ${withFollowUps(claimedWithSendDetails, webhooksDisabledChannel)}`;
const recordAndClaimCappedFollowUpsSql = `
  WITH ${recordedCte(17, recordedForFollowUps(20, 21))}, ${followUpCtes}, ${cappedClaim}
  ${withFollowUps(claimedWithSendDetails, webhooksDisabledChannel)}`;

/**
 * Session settings of the connections that run recordAndClaim (the engine's worker pool).
 * - Its statements are prepared and planned once per connection, generically (force_generic_plan).
 *   Planning every execution (force_custom_plan, as before) was 70% of the engine's Postgres time at
 *   200 events/s: a claim is planned in ~0.3 ms and, at moderate rates, takes one row. Left to choose
 *   (auto), Postgres 18 settled on the generic plan after five executions and Postgres 15 never did.
 *   Both claims keep their plan quality under it on both versions (test/integration/claim-plans.test.ts
 *   counts the index entries read).
 * - Its claim reads the head of the unfinished-rows index in id order. When a backlog builds up faster
 *   than autovacuum refreshes the statistics, the planner believes the queue is tiny and picks a bitmap
 *   scan of the whole backlog plus a sort (measured: 5 ms instead of 0.3 ms per claim at 20k queued).
 *   Without bitmap scans it walks the index and stops at the limit.
 * - A plan made once must hold however the tables grow, and whatever the statistics said when it was
 *   made. Two cases made both claims read deliveries and events whole: statistics taken while a
 *   backlog was queued (autovacuum analyzes during a burst) estimate the claim's `LIMIT $8` at a tenth
 *   of the queue, so a hash join over the whole table looked cheaper (measured: 6 ms per claim of 50 at
 *   20k queued, against 1 ms); tables that were empty when the plan was made (a new installation, until
 *   autovacuum analyzes) made every scan look free (ten claims read 62 million rows, 10 s, at
 *   5k queued). Without sequential scans, and with the claimed rows found by an id array (claimedCte),
 *   the plan is index lookups in every case (test/integration/claim-plans.test.ts).
 */
export const claimSessionSettings = {
  enable_bitmapscan: "off",
  enable_seqscan: "off",
  plan_cache_mode: "force_generic_plan",
};

/**
 * Records finished outcomes and claims up to `claim.limit` due deliveries, in one statement. Run it on
 * connections with claimSessionSettings.
 */
export async function recordAndClaim(
  db: Queryable,
  workerId: string,
  outcomes: RecordedOutcome[],
  claim: ClaimRequest,
): Promise<ClaimedDelivery[]> {
  const claimed = await runRecordAndClaim(db, workerId, outcomes, claim, true);
  // The plain claim (taken when no known webhook and not the restricted budget can bind) knows no
  // limit for webhooks this worker has not seen: past their starting allowance, their rows go back
  // at once. It happens once per new webhook: from then on it is known, and its limit binds in SQL.
  const kept: ClaimedDelivery[] = [];
  const surplus: number[] = [];
  const taken = new Map<number, number>();
  for (const delivery of claimed) {
    if (claim.plan.allowances.has(delivery.webhook_id)) {
      kept.push(delivery);
      continue;
    }
    const count = (taken.get(delivery.webhook_id) ?? 0) + 1;
    taken.set(delivery.webhook_id, count);
    if (count <= claim.plan.defaultAllowance) kept.push(delivery);
    else surplus.push(delivery.id);
  }
  if (surplus.length > 0) await releaseClaimsOf(db, workerId, surplus);
  return kept;
}

async function runRecordAndClaim(
  db: Queryable,
  workerId: string,
  outcomes: RecordedOutcome[],
  claim: ClaimRequest | undefined,
  prepared: boolean,
): Promise<ClaimedDelivery[]> {
  const values: unknown[] = [
    workerId,
    arrayLiteral(outcomes.map((o) => o.id)),
    arrayLiteral(outcomes.map((o) => (o.outcome.success ? "t" : "f"))),
    arrayLiteral(outcomes.map((o) => o.outcome.statusCode)),
    outcomes.map((o) => o.outcome.responseBody),
    outcomes.map((o) => o.outcome.errorMessage),
    arrayLiteral(outcomes.map((o) => o.deliveredAtMs)),
    claim?.limit ?? 0,
    claim?.leaseMs ?? 0,
  ];
  // The limits can bind only if some webhook, known or not, or the restricted webhooks together (when
  // there are any) could not take a full claim; otherwise the plain claim (cheaper) is the same.
  let capped = false;
  if (claim && claim.limit > 0) {
    const allowances = [...claim.plan.allowances.values()];
    const tightest = Math.min(...allowances.map((a) => a.allowance));
    const budgetBinds = claim.plan.restrictedBudget < claim.limit && allowances.some((a) => a.restricted);
    capped = tightest < claim.limit || budgetBinds;
  }
  if (capped && claim) {
    const { plan } = claim;
    const known = [...plan.allowances];
    const exhausted = known.filter(([, a]) => a.allowance === 0).map(([id]) => id);
    const onlyUnrestricted =
      plan.restrictedBudget > 0
        ? null
        : known.filter(([, a]) => !a.restricted && a.allowance > 0).map(([id]) => id);
    values.push(
      known.map(([id]) => id),
      known.map(([, a]) => a.allowance),
      plan.defaultAllowance,
      exhausted,
      onlyUnrestricted,
      known.map(([, a]) => a.restricted),
      plan.restrictedBudget,
    );
  }
  // The headers sent and the duration follow the claim's parameters ($10–$12, or $17–$19 when capped).
  values.push(
    arrayLiteral(outcomes.map((o) => o.outcome.requestTimestamp)),
    // "sha256=<hex>" needs no quoting in an array literal.
    arrayLiteral(outcomes.map((o) => o.outcome.signature)),
    // Only an attempt that sent a request has a duration worth showing.
    arrayLiteral(outcomes.map((o) => (o.outcome.requestTimestamp === null ? null : o.outcome.durationMs))),
  );
  const followUps = outcomes.some((o) => (o.retryInMs ?? null) !== null || o.countsTowardAutoDisable);
  if (!followUps) {
    const name = capped ? "record-and-claim-capped" : "record-and-claim";
    const { rows } = await db.query<ClaimedDelivery>({
      ...(prepared ? { name } : {}),
      text: capped ? recordAndClaimCappedSql : recordAndClaimSql,
      values,
    });
    return rows;
  }
  values.push(
    arrayLiteral(outcomes.map((o) => o.retryInMs ?? null)),
    arrayLiteral(outcomes.map((o) => (o.countsTowardAutoDisable ? "t" : "f"))),
  );
  const name = capped ? "record-and-claim-capped-follow-ups" : "record-and-claim-follow-ups";
  const { rows } = await db.query<
    Partial<ClaimedDelivery> & { retries_scheduled: number; disabled_ids: number[] | null }
  >({
    ...(prepared ? { name } : {}),
    text: capped ? recordAndClaimCappedFollowUpsSql : recordAndClaimFollowUpsSql,
    values,
  });
  const first = rows[0];
  if (first && first.retries_scheduled > 0) metrics.retriesScheduled.inc(first.retries_scheduled);
  if (first?.disabled_ids) metrics.webhooksAutoDisabled.inc(first.disabled_ids.length);
  return rows.filter((row): row is ClaimedDelivery & typeof row => row.id !== null && row.id !== undefined);
}

/** Writes outcomes without claiming anything (replays, test events, a worker shutting down). */
export async function recordOutcomes(
  db: Queryable,
  workerId: string,
  outcomes: RecordedOutcome[],
): Promise<void> {
  // Not prepared: these connections lack claimSessionSettings.
  if (outcomes.length > 0) await runRecordAndClaim(db, workerId, outcomes, undefined, false);
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
  delivery: { webhookId: number; eventId: string; eventType: string; attemptNumber: number | null },
  lease: { workerId: string; leaseMs: number },
): Promise<{ id: number; attempt_number: number } | undefined> {
  const { rows } = await db.query<{ id: number; attempt_number: number }>(
    `WITH webhook AS (SELECT id FROM webhooks WHERE id = $1 FOR KEY SHARE),
          event AS (SELECT id FROM events WHERE id = $2 FOR KEY SHARE)
     INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, state, locked_by, locked_until)
     SELECT webhook.id, event.id, $3,
            COALESCE($4, GREATEST(1, (SELECT max(attempt_number) FROM deliveries
                                       WHERE webhook_id = $1 AND event_id = $2 AND attempt_number > 1)) + 1),
            'in_flight', $5, clock_timestamp() + $6 * interval '1 millisecond'
       FROM webhook, event
     RETURNING id, attempt_number`,
    [
      delivery.webhookId,
      delivery.eventId,
      delivery.eventType,
      delivery.attemptNumber,
      lease.workerId,
      lease.leaseMs,
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
): Promise<{ depth: number; oldestAgeSeconds: number; retriesWaiting: number }> {
  const { rows } = await db.query<{ depth: number; oldest_age_seconds: number; retries_waiting: number }>(
    `SELECT count(*)::int AS depth,
            COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0)::float8 AS oldest_age_seconds,
            (SELECT count(*)::int FROM scheduled_retries) AS retries_waiting
       FROM deliveries WHERE delivered_at IS NULL`,
  );
  return {
    depth: rows[0]?.depth ?? 0,
    oldestAgeSeconds: rows[0]?.oldest_age_seconds ?? 0,
    retriesWaiting: rows[0]?.retries_waiting ?? 0,
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
       RETURNING s.webhook_id, s.event_id, s.event_type, s.attempt_number
     ), policies AS (
       SELECT id, retry_max_attempts FROM webhooks WHERE id IN (SELECT webhook_id FROM taken) FOR KEY SHARE
     ), queued AS (
       INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number)
       SELECT t.webhook_id, t.event_id, t.event_type, n.attempt_number
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
