import { expect, it } from "vitest";
import { type Pool, withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/queue.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { onNewDatabase, resetToOneWebhook, workerConnectionsOf } from "../support/new-database.js";

// A claim reads the head of the queue, however the planner's statistics look, with the generic plan the
// worker's connections use (planning every execution was most of the engine's Postgres time). Run on
// Postgres 18 by npm test and on Postgres 15 by .ci/run: both keep to the head. The statistics of a
// long-running installation are taken while its queue is empty (autovacuum analyzes a table of finished
// attempts); a backlog that builds up afterwards is invisible to them. Measured in index entries read,
// not time: the capped claim once rescanned its chosen ids for every queued row (320 ms per claim with
// 20k queued) on exactly such statistics.

let pool: Pool;
onNewDatabase((created) => (pool = created), 1, claimSessionSettings);

async function unfinishedIndexReads(): Promise<number> {
  await pool.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await pool.query<{ reads: string }>(
    "SELECT idx_tup_read AS reads FROM pg_stat_user_indexes WHERE indexrelname = 'deliveries_unfinished'",
  );
  return Number(rows[0]?.reads);
}

let webhookId: number;
let projectId: number;

/** Finished history, analyzed while nothing is queued (what autovacuum sees), then a backlog. */
async function historyThenBacklog(backlog: number): Promise<void> {
  ({ projectId, webhookId } = await resetToOneWebhook(pool));
  await pool.query(
    `INSERT INTO deliveries (webhook_id, event_id, event_type, state, success, status_code, response_body, delivered_at)
     SELECT $1, gen_random_uuid(), 'deployment.created', 'done', true, 200, '', now() FROM generate_series(1, 20000)`,
    [webhookId],
  );
  await pool.query("ANALYZE deliveries");
  await emitBacklog(backlog);
}

/** Rows of deliveries and events read by sequential scans so far (a claim should read none). */
async function rowsReadBySeqScans(): Promise<number> {
  await pool.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await pool.query<{ reads: string }>(
    "SELECT sum(seq_tup_read) AS reads FROM pg_stat_user_tables WHERE relname IN ('deliveries', 'events')",
  );
  return Number(rows[0]?.reads);
}

async function emitBacklog(count: number): Promise<void> {
  await withTransaction(pool, (client) =>
    emitEvents(
      client,
      Array.from({ length: count }, () => ({
        eventType: "deployment.created" as const,
        projectId,
        payload: {},
      })),
    ),
  );
}

/** No limit can bind a claim of 128. */
const plainPlan = { allowances: new Map(), defaultAllowance: 128, restrictedBudget: 128 };
/** The test's webhook known with a limit below the claim's: 64 rows a claim. */
const cappedPlan = () => ({
  allowances: new Map([[webhookId, { allowance: 64, restricted: false }]]),
  defaultAllowance: 2,
  restrictedBudget: 32,
});

/** Both plans (uncapped, then capped) `turns` times each; the deliveries they claimed. */
async function claimBoth(turns: number): Promise<number> {
  let claimed = 0;
  for (let turn = 0; turn < turns; turn++) {
    for (const plan of [plainPlan, cappedPlan()]) {
      claimed += (
        await recordAndClaim(
          workerConnectionsOf(pool),
          "worker-a",
          [],
          { limit: 128, leaseMs: 60_000, plan },
          autoDisablePolicy,
        )
      ).length;
    }
  }
  return claimed;
}

/** How this connection planned its prepared statements so far (pg_prepared_statements is per session). */
async function plansOf(name: string): Promise<{ generic: number; custom: number }> {
  const { rows } = await pool.query<{ generic: string; custom: string }>(
    "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name = $1",
    [name],
  );
  return { generic: Number(rows[0]?.generic ?? 0), custom: Number(rows[0]?.custom ?? 0) };
}

it("the claim's generic plan reads only the head of a backlog the statistics missed", async () => {
  await historyThenBacklog(5_000);
  const before = await unfinishedIndexReads();
  let claimed = 0;
  for (let turn = 0; turn < 10; turn++) {
    const claim = { limit: 128, leaseMs: 60_000, plan: plainPlan };
    claimed += (await recordAndClaim(workerConnectionsOf(pool), "worker-a", [], claim, autoDisablePolicy))
      .length;
  }
  const reads = (await unfinishedIndexReads()) - before;
  expect(claimed).toBe(1_280);
  // The worker's connections plan its statements once, generically (claimSessionSettings).
  expect((await plansOf("claim")).generic).toBeGreaterThan(0);
  // Each claim reads past the rows claimed before it and takes its own 128: 128 × (1 + 2 + … + 10) =
  // 7,040 index entries in all, plus one a claim to find the webhook (claim.ts: one entry per webhook
  // with unfinished rows). A plan that walked the backlog would read 5,000 per claim, 50,000.
  expect(reads).toBeLessThanOrEqual(7_040 + 10);
});

it("the claim capped by a webhook's allowance reads only the head of a backlog the statistics missed", async () => {
  await historyThenBacklog(5_000);
  const claim = { limit: 128, leaseMs: 60_000, plan: cappedPlan() };
  const reads: number[] = [];
  for (let turn = 0; turn < 10; turn++) {
    const before = await unfinishedIndexReads();
    expect(
      await recordAndClaim(workerConnectionsOf(pool), "worker-a", [], claim, autoDisablePolicy),
    ).toHaveLength(64);
    reads.push((await unfinishedIndexReads()) - before);
  }
  expect((await plansOf("claim")).generic).toBeGreaterThan(0);
  // Each reads past the rows claimed before it, then its candidates (twice the claim) and the rows it
  // locks. The regression joined the chosen ids once per queued row: 5,000 entries and more per claim.
  reads.forEach((read, turn) => {
    expect(read).toBeLessThanOrEqual(64 * turn + 256 + 64);
  });
});

// Two more ways statistics can mislead a plan made once. Either made the claims scan both tables whole
// (measured at 20k queued: 6 ms per claim instead of 1): statistics taken while a backlog was queued
// (autovacuum analyzes during a burst) estimated a claim at a tenth of the queue; tables that were
// empty when the plan was made (a new installation) made scans look cheapest.
it("neither claim scans deliveries or events when the statistics were taken during a backlog", async () => {
  ({ projectId, webhookId } = await resetToOneWebhook(pool));
  await emitBacklog(5_000);
  await pool.query("ANALYZE deliveries, events");
  const before = await rowsReadBySeqScans();
  expect(await claimBoth(5)).toBe(5 * (128 + 64));
  expect((await rowsReadBySeqScans()) - before).toBe(0);
});

it("neither claim scans deliveries or events when the plan was made while the tables were empty", async () => {
  ({ projectId, webhookId } = await resetToOneWebhook(pool));
  await pool.query("ANALYZE deliveries, events");
  expect(await claimBoth(1)).toBe(0);
  await emitBacklog(5_000);
  const before = await rowsReadBySeqScans();
  expect(await claimBoth(5)).toBe(5 * (128 + 64));
  expect((await rowsReadBySeqScans()) - before).toBe(0);
  expect((await plansOf("claim")).generic).toBeGreaterThan(0);
});
