import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool, withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { waitUntil } from "../support/wait.js";

// A worker process is killed with SIGKILL in the middle of a burst; after a new process starts, every
// emitted event has its deliveries (none lost) and any duplicate the receiver saw is the same event.

let database: TestDatabase;
let pool: Pool;
let receiver: Receiver;
const children: ChildProcess[] = [];

function startWorkerProcess(): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve"], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      API_KEY: "crash-test-admin-key-0123",
      KUBERNETES: "false",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "silent",
      DELIVERY_LEASE_MS: "3000",
      DELIVERY_TIMEOUT_MS: "1000",
      DELIVERY_POLL_INTERVAL_MS: "200",
      DELIVERY_CONCURRENCY: "16",
    },
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

async function doneCount(): Promise<number> {
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM deliveries WHERE state = 'done'");
  return rows[0].n;
}

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 4);
  receiver = await startReceiver();
  // Slow enough that the burst is still being delivered when the worker dies.
  for (const path of ["/a", "/b"]) {
    receiver.on(path, (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 15));
  }
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await pool.end();
  await receiver.close();
  await database.drop();
});

it("loses no delivery when a worker is killed mid-burst", { timeout: 60_000 }, async () => {
  const { rows: projectRows } = await pool.query(
    "INSERT INTO projects (name, slug) VALUES ('Crash', 'crash') RETURNING id",
  );
  const projectId = projectRows[0].id as number;
  const { rows: webhookRows } = await pool.query(
    `INSERT INTO webhooks (project_id, url, events, enabled) VALUES
       ($1, $2, '{deployment.created}', true), ($1, $3, '{deployment.created}', true) RETURNING id`,
    [projectId, `${receiver.url}/a`, `${receiver.url}/b`],
  );
  expect(webhookRows).toHaveLength(2);

  const first = startWorkerProcess();
  const events = 300;
  const bodies = new Map<string, string>();
  for (let batch = 0; batch < events / 50; batch++) {
    const { emitted } = await withTransaction(pool, (client) =>
      emitEvents(
        client,
        Array.from({ length: 50 }, (_, i) => ({
          eventType: "deployment.created" as const,
          projectId,
          payload: { deployment_id: batch * 50 + i },
        })),
      ),
    );
    for (const event of emitted) bodies.set(event.envelope.id, event.body);
  }
  const expectedDeliveries = events * 2;

  await receiver.waitFor(100, 20_000);
  first.kill("SIGKILL");
  await new Promise((resolve) => first.once("exit", resolve));
  const doneAtKill = await doneCount();
  expect(doneAtKill).toBeLessThan(expectedDeliveries);
  const { rows: orphaned } = await pool.query(
    "SELECT count(*)::int AS n FROM deliveries WHERE state = 'in_flight'",
  );

  startWorkerProcess();
  await waitUntil(
    "(await doneCount()) === expectedDeliveries",
    async () => ((await doneCount()) === expectedDeliveries ? true : undefined),
    { timeoutMs: 40_000 },
  );

  // Every event has exactly one finished, successful delivery per webhook.
  const { rows } = await pool.query(
    `SELECT event_id, count(*)::int AS n, bool_and(success) AS ok FROM deliveries GROUP BY event_id`,
  );
  expect(rows).toHaveLength(events);
  for (const row of rows) expect(row).toMatchObject({ n: 2, ok: true });

  // The receiver saw every (webhook, event) at least once; a duplicate is the same event, byte for byte.
  const seen = new Set<string>();
  for (const request of receiver.requests) {
    const id = JSON.parse(request.body).id as string;
    expect(request.body).toBe(bodies.get(id));
    seen.add(`${request.path} ${id}`);
  }
  expect(seen.size).toBe(expectedDeliveries);
  console.info(
    `crash safety: ${doneAtKill}/${expectedDeliveries} recorded at SIGKILL, ${orphaned[0].n} claims orphaned, ` +
      `${receiver.requests.length - expectedDeliveries} duplicate sends after restart`,
  );
});
