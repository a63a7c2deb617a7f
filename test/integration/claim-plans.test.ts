import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool, withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/outbox.js";
import { insertProject } from "../../src/projects/store.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// A claim reads the head of the queue, however the planner's statistics look. The statistics of a
// long-running installation are taken while its queue is empty (autovacuum analyzes a table of finished
// attempts); a backlog that builds up afterwards is invisible to them. Measured in index entries read,
// not time: the capped claim once rescanned its chosen ids for every queued row (320 ms per claim with
// 20k queued) on exactly such statistics.

let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 1, claimSessionSettings);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

async function unfinishedIndexReads(): Promise<number> {
  await pool.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await pool.query<{ reads: string }>(
    "SELECT idx_tup_read AS reads FROM pg_stat_user_indexes WHERE indexrelname = 'deliveries_unfinished'",
  );
  return Number(rows[0]?.reads);
}

it("a capped claim on statistics from an empty queue reads only the head of a large backlog", async () => {
  const project = await insertProject(pool, { name: "P", slug: "p", repoUrl: null });
  const webhook = await insertWebhook(pool, {
    projectId: project.id,
    url: "https://receiver.example/hook",
    events: ["deployment.created"],
    enabled: true,
    secret: null,
  });
  // History: finished attempts only, then the statistics autovacuum would take of it.
  await pool.query(
    `INSERT INTO deliveries (webhook_id, event_id, event_type, state, success, status_code, response_body, delivered_at)
     SELECT $1, gen_random_uuid(), 'deployment.created', 'done', true, 200, '', now() FROM generate_series(1, 20000)`,
    [webhook.id],
  );
  await pool.query("ANALYZE deliveries");
  const backlog = 5_000;
  await withTransaction(pool, (client) =>
    emitEvents(
      client,
      Array.from({ length: backlog }, () => ({
        eventType: "deployment.created" as const,
        projectId: project.id,
        payload: {},
      })),
    ),
  );

  const before = await unfinishedIndexReads();
  // A known webhook whose limit is below the claim's: the capped statement.
  const claimed = await recordAndClaim(pool, "worker-a", [], {
    limit: 128,
    leaseMs: 60_000,
    plan: {
      allowances: new Map([[webhook.id, { allowance: 64, restricted: false }]]),
      defaultAllowance: 2,
      restrictedBudget: 32,
    },
  });
  const reads = (await unfinishedIndexReads()) - before;
  expect(claimed).toHaveLength(64);
  // The candidates (twice the claim) and the rows locked; the regression read every queued row.
  expect(reads).toBeLessThan(1_000);
});
