import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../../src/db/embedded.js";
import { type Pool, withTransaction } from "../../src/db/pool.js";
import { claimStatement, claimValues } from "../../src/delivery-engine/claim.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/queue.js";
import { createWorkerConnections } from "../../src/delivery-engine/worker-queue.js";
import { createLogger } from "../../src/logger.js";
import { metrics } from "../../src/metrics.js";
import { insertProject } from "../../src/projects/store.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { createTestDatabase } from "../support/database.js";
import { onNewDatabase, workerConnectionsOf } from "../support/new-database.js";
import { freePort } from "../support/ports.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// An attempt that finished is recorded: never skipped because its lease ran out, never forgotten
// because the database was away for a moment (which would send the delivery a second time).

describe("the worker's connections", () => {
  it("wait for the disk when they record outcomes, not when they claim or release", async () => {
    const database = await createTestDatabase();
    const connections = createWorkerConnections(database.url, { logger: createLogger("silent") });
    try {
      const setting = async (pool: Pool) =>
        (await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]
          ?.synchronous_commit;
      expect(await setting(connections.outcomes)).toBe("on");
      expect(await setting(connections.leases)).toBe("off");
    } finally {
      await connections.end();
      await database.drop();
    }
  });
});

describe("recording an outcome whose lease ran out", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings);

  it("writes the outcome, and the claim beside it does not take the row again", async () => {
    const project = await insertProject(pool, { name: "P", slug: "p", repoUrl: null });
    const webhook = await insertWebhook(pool, testSecretBox(), {
      projectId: project.id,
      url: "https://x.example",
      events: ["deployment.created"],
      enabled: true,
      secret: null,
    });
    await withTransaction(pool, (client) =>
      emitEvents(client, [{ eventType: "deployment.created", projectId: project.id, payload: {} }]),
    );
    const claim = {
      limit: 10,
      leaseMs: 1,
      plan: { allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 },
    };
    const [claimed] = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker-a",
      [],
      claim,
      autoDisablePolicy,
    );
    expect(claimed?.webhook_id).toBe(webhook.id);
    await waitUntil("the 1 ms lease to run out", async () => {
      const { rows } = await pool.query(
        "SELECT locked_until < clock_timestamp() AS expired FROM deliveries WHERE id = $1",
        [claimed?.id],
      );
      return rows[0]?.expired ? true : undefined;
    });
    const outcome = {
      success: true,
      statusCode: 200,
      responseBody: "ok",
      errorMessage: null,
      failure: null,
      durationMs: 5,
      requestTimestamp: null,
      signature: null,
    };
    const reclaimed = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker-a",
      [{ id: claimed?.id ?? 0, outcome, deliveredAtMs: Date.now() }],
      claim,
      autoDisablePolicy,
    );
    expect(reclaimed).toEqual([]);
    const { rows } = await pool.query("SELECT state, success, status_code FROM deliveries WHERE id = $1", [
      claimed?.id,
    ]);
    expect(rows[0]).toEqual({ state: "done", success: true, status_code: 200 });
  });
});

describe("the claim beside a record", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 1, claimSessionSettings);

  // The record and the claim of a turn run side by side (queue.ts): which one locks a row first is a
  // race, so the claim is given the rows being recorded and must pass over them.
  it("passes over a row being recorded whose lease ran out, and takes it when it is not", async () => {
    const project = await insertProject(pool, { name: "Q", slug: "q", repoUrl: null });
    await insertWebhook(pool, testSecretBox(), {
      projectId: project.id,
      url: "https://x.example",
      events: ["deployment.created"],
      enabled: true,
      secret: null,
    });
    await withTransaction(pool, (client) =>
      emitEvents(client, [{ eventType: "deployment.created", projectId: project.id, payload: {} }]),
    );
    const claim = {
      limit: 10,
      leaseMs: 1,
      plan: { allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 },
    };
    const [claimed] = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker-a",
      [],
      claim,
      autoDisablePolicy,
    );
    const id = claimed?.id as number;
    await pool.query(
      "UPDATE deliveries SET locked_until = clock_timestamp() - interval '1 s' WHERE id = $1",
      [id],
    );
    const claimBeside = async (recording: number[]) =>
      (
        await pool.query<{ id: number }>({
          name: claimStatement.name,
          text: claimStatement.text,
          values: claimValues("worker-b", claim, recording),
        })
      ).rows.map((row) => row.id);
    expect(await claimBeside([id])).toEqual([]);
    expect(await claimBeside([])).toEqual([id]);
  });
});

describe("a record that fails beside a claim", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings);

  it("throws its error and hands what the claim took back to the queue", async () => {
    const project = await insertProject(pool, { name: "R", slug: "r", repoUrl: null });
    await insertWebhook(pool, testSecretBox(), {
      projectId: project.id,
      url: "https://x.example",
      events: ["deployment.created"],
      enabled: true,
      secret: null,
    });
    await withTransaction(pool, (client) =>
      emitEvents(client, [{ eventType: "deployment.created", projectId: project.id, payload: {} }]),
    );
    const claim = {
      limit: 10,
      leaseMs: 60_000,
      plan: { allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 },
    };
    // A response body Postgres refuses (a NUL character in text): the record fails, the claim does not.
    const refused = {
      id: 999_999,
      outcome: {
        success: false,
        statusCode: 500,
        responseBody: "\u0000",
        errorMessage: null,
        failure: "http" as const,
        durationMs: 1,
        requestTimestamp: 1,
        signature: null,
      },
      deliveredAtMs: Date.now(),
    };
    await expect(
      recordAndClaim(workerConnectionsOf(pool), "worker-a", [refused], claim, autoDisablePolicy),
    ).rejects.toThrow();
    const { rows } = await pool.query("SELECT state, locked_by FROM deliveries");
    expect(rows).toEqual([{ state: "queued", locked_by: null }]);
  });
});

/**
 * An embedded Postgres of the describe block's own, on a data directory that outlives its restarts,
 * and a receiver: both go after the block.
 */
function ownPostgres(prefix: string) {
  const logger = createLogger("silent");
  const own = {
    dataDir: "",
    port: 0,
    postgres: undefined as unknown as EmbeddedDatabase,
    receiver: undefined as unknown as Receiver,
    start: () => startEmbeddedPostgres({ dataDir: own.dataDir, port: own.port, logger }),
  };
  beforeAll(async () => {
    own.dataDir = await mkdtemp(path.join(tmpdir(), prefix));
    own.port = await freePort();
    own.postgres = await own.start();
    own.receiver = await startReceiver();
  });
  afterAll(async () => {
    await own.receiver.close();
    await own.postgres.stop();
    await rm(own.dataDir, { recursive: true, force: true });
  });
  return own;
}

describe("a short database outage", () => {
  const own = ownPostgres("wo-outage-");

  it("keeps the outcomes of sends that finished while it was away, writes them after, and sends nothing twice", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { receiver } = own;
    receiver.on("/slow", (_request, res) => void gate.then(() => res.writeHead(200).end("ok")));
    const service = await startTestService(
      { DELIVERY_LEASE_MS: "3000", DELIVERY_TIMEOUT_MS: "1000", DELIVERY_POLL_INTERVAL_MS: "100" },
      {
        database: {
          name: "postgres",
          url: own.postgres.url,
          drop: async () => {},
        },
      },
    );
    try {
      const project = await createProject(service, "p", "P");
      await createWebhook(service, project, { url: `${receiver.url}/slow`, events: ["deployment.created"] });
      await withTransaction(service.pool, (client) =>
        emitEvents(
          client,
          Array.from({ length: 5 }, () => ({
            eventType: "deployment.created" as const,
            projectId: project,
            payload: {},
          })),
        ),
      );
      await receiver.waitFor(5);
      // The database goes away while the five sends are open; they finish meanwhile.
      await own.postgres.stop();
      release();
      // The five sends end (no delivery in flight any more) while the database is still away.
      await waitUntil("(await metrics.inFlight.get()).values[0]?.value === 0", async () =>
        (await metrics.inFlight.get()).values[0]?.value === 0 ? true : undefined,
      );
      own.postgres = await own.start();
      await waitUntil(
        "rows[0].n === 5",
        async () => {
          const { rows } = await service.pool.query(
            "SELECT count(*)::int AS n FROM deliveries WHERE state = 'done'",
          );
          return rows[0].n === 5 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      // Every row is finished, so no worker will send one again: a forgotten outcome would have left its
      // row in flight, sent again once its lease ran out (and received) before it could be finished.
      expect(receiver.requests.filter((r) => r.path === "/slow")).toHaveLength(5);
    } finally {
      await service.close();
    }
  });
});

describe("a crash of Postgres in the middle of a burst", () => {
  const own = ownPostgres("wo-crash-");

  /** Ends the postmaster as a crash would (SIGQUIT: no checkpoint, recovery from the WAL at the next start). */
  async function crashPostgres(): Promise<void> {
    const pid = Number(
      (await readFile(path.join(own.dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0],
    );
    process.kill(pid, "SIGQUIT");
    await waitUntil(`the postmaster ${pid} gone`, async () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
  }

  it("loses no event and no outcome recorded before it, and every event is sent once it is back", async () => {
    // The first 100 requests are answered at once; the rest wait until Postgres is back, so the crash
    // comes with outcomes recorded, claims committed and sends open. The claims' commits do not wait
    // for the disk (queue.ts, WorkerConnections): one the crash lost only sends its row again.
    let answered = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { receiver } = own;
    receiver.on("/crash", (_request, res) => {
      answered += 1;
      if (answered <= 100) res.writeHead(200).end("ok");
      else void gate.then(() => res.writeHead(200).end("ok"));
    });
    const service = await startTestService(
      { DELIVERY_LEASE_MS: "11000", DELIVERY_TIMEOUT_MS: "5000", DELIVERY_POLL_INTERVAL_MS: "100" },
      { database: { name: "postgres", url: own.postgres.url, drop: async () => {} } },
    );
    try {
      const project = await createProject(service, "p", "P");
      await createWebhook(service, project, { url: `${receiver.url}/crash`, events: ["deployment.created"] });
      const events = new Set<string>();
      for (let batch = 0; batch < 6; batch++) {
        const { emitted } = await withTransaction(service.pool, (client) =>
          emitEvents(
            client,
            Array.from({ length: 50 }, () => ({
              eventType: "deployment.created" as const,
              projectId: project,
              payload: {},
            })),
          ),
        );
        for (const event of emitted) events.add(event.envelope.id);
      }
      await receiver.waitFor(101, 30_000);
      const done = async () =>
        (
          await service.pool.query<{ id: number; status_code: number }>(
            "SELECT id, status_code FROM deliveries WHERE state = 'done' ORDER BY id",
          )
        ).rows;
      // The outcomes of the first 100 answers, recorded before the crash.
      const recorded = await waitUntil("100 outcomes recorded", async () => {
        const rows = await done();
        return rows.length >= 100 ? rows : undefined;
      });
      await crashPostgres();
      own.postgres = await own.start();
      release();
      await waitUntil(
        "every delivery done",
        async (saw) => {
          const { rows } = await service.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM deliveries WHERE state <> 'done'",
          );
          saw(`${rows[0]?.n} not done`);
          return rows[0]?.n === 0 ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const { rows: kept } = await service.pool.query<{ id: number; event_id: string }>(
        "SELECT id, event_id FROM deliveries WHERE state = 'done'",
      );
      expect(new Set(kept.map((row) => row.event_id))).toEqual(events);
      const after = new Map((await done()).map((row) => [row.id, row.status_code]));
      for (const row of recorded) expect(after.get(row.id)).toBe(row.status_code);
      const received = new Set(
        receiver.requests.map((request) => (JSON.parse(request.body) as { id: string }).id),
      );
      expect(received).toEqual(events);
    } finally {
      await service.close();
    }
  });
});
