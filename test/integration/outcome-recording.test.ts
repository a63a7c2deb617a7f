import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../../src/db/embedded.js";
import { type Pool, withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/queue.js";
import { createLogger } from "../../src/logger.js";
import { metrics } from "../../src/metrics.js";
import { insertProject } from "../../src/projects/store.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { onNewDatabase } from "../support/new-database.js";
import { freePort } from "../support/ports.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// An attempt that finished is recorded: never skipped because its lease ran out, never forgotten
// because the database was away for a moment (which would send the delivery a second time).

describe("recording an outcome whose lease ran out", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings, { pipeline: true });

  it("writes the outcome, and the claim after it does not take the row again", async () => {
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
    const [claimed] = await recordAndClaim(pool, "worker-a", [], claim, autoDisablePolicy);
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
      pool,
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

const anyClaim = (leaseMs: number) => ({
  limit: 10,
  leaseMs,
  plan: { allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 },
});

const succeeded = {
  success: true,
  statusCode: 200,
  responseBody: "ok",
  errorMessage: null,
  failure: null,
  durationMs: 5,
  requestTimestamp: null,
  signature: null,
};

/** A project with one webhook subscribed to deployment.created, and `events` emitted for it. */
async function oneWebhookWith(
  pool: Pool,
  slug: string,
  events: { rollout?: { id: number; position: number } }[],
): Promise<void> {
  const project = await insertProject(pool, { name: slug, slug, repoUrl: null });
  await insertWebhook(pool, testSecretBox(), {
    projectId: project.id,
    url: "https://x.example",
    events: ["deployment.created"],
    enabled: true,
    secret: null,
  });
  await withTransaction(pool, (client) =>
    emitEvents(
      client,
      events.map((event) => ({
        eventType: "deployment.created" as const,
        projectId: project.id,
        payload: {},
        ...event,
      })),
    ),
  );
}

describe("a turn: the record, then the claim, in one transaction", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 1, claimSessionSettings, { pipeline: true });

  it("commits the outcome and the claim together, and the claim sees the outcome", async () => {
    // A rollout's second event may go only once its first has finished (sql/claim.sql).
    await oneWebhookWith(pool, "rollout", [
      { rollout: { id: 7, position: 0 } },
      { rollout: { id: 7, position: 1 } },
    ]);
    const [first, ...others] = await recordAndClaim(
      pool,
      "worker-a",
      [],
      anyClaim(60_000),
      autoDisablePolicy,
    );
    expect(others).toEqual([]);
    const [second] = await recordAndClaim(
      pool,
      "worker-a",
      [{ id: first?.id ?? 0, outcome: succeeded, deliveredAtMs: Date.now(), holdsLaterEvents: true }],
      anyClaim(60_000),
      autoDisablePolicy,
    );
    // Claimed in the turn that recorded the first: a claim beside the record would still see it unfinished.
    expect(second?.id).toBeGreaterThan(first?.id ?? 0);
    // Both rows were last written by one transaction (xmin: the transaction that wrote a row version).
    const { rows } = await pool.query<{ writers: number }>(
      "SELECT count(DISTINCT xmin::text)::int AS writers FROM deliveries WHERE id = ANY ($1::bigint[])",
      [[first?.id, second?.id]],
    );
    expect(rows[0]?.writers).toBe(1);
  });
});

describe("a turn that fails", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings, { pipeline: true });

  it("throws the record's error, and claims nothing", async () => {
    await oneWebhookWith(pool, "r", [{}]);
    // A response body Postgres refuses (a NUL character in text): the record fails.
    const refused = {
      id: 999_999,
      outcome: {
        ...succeeded,
        success: false,
        statusCode: 500,
        responseBody: "\u0000",
        failure: "http" as const,
      },
      deliveredAtMs: Date.now(),
    };
    await expect(
      recordAndClaim(pool, "worker-a", [refused], anyClaim(60_000), autoDisablePolicy),
    ).rejects.toThrow(/0x00/);
    const { rows } = await pool.query("SELECT state, locked_by FROM deliveries");
    expect(rows).toEqual([{ state: "queued", locked_by: null }]);
  });

  it("throws the claim's error, and records nothing", async () => {
    await pool.query("TRUNCATE projects, webhooks, events, deliveries RESTART IDENTITY CASCADE");
    await oneWebhookWith(pool, "c", [{}]);
    const [claimed] = await recordAndClaim(pool, "worker-a", [], anyClaim(60_000), autoDisablePolicy);
    // A budget past int's range: Postgres refuses the claim (:restricted_budget::int), after the record ran.
    const refusedClaim = {
      ...anyClaim(60_000),
      plan: { ...anyClaim(60_000).plan, restrictedBudget: 2 ** 40 },
    };
    await expect(
      recordAndClaim(
        pool,
        "worker-a",
        [{ id: claimed?.id ?? 0, outcome: succeeded, deliveredAtMs: Date.now() }],
        refusedClaim,
        autoDisablePolicy,
      ),
    ).rejects.toThrow(/out of range/);
    // The outcome went with the claim: the worker keeps it for its next turn (worker.ts, failed).
    const { rows } = await pool.query("SELECT state, locked_by FROM deliveries");
    expect(rows).toEqual([{ state: "in_flight", locked_by: "worker-a" }]);
  });
});

describe("a short database outage", () => {
  let dataDir: string;
  let port: number;
  let postgres: EmbeddedDatabase;
  let receiver: Receiver;
  const logger = createLogger("silent");
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "wo-outage-"));
    port = await freePort();
    postgres = await startEmbeddedPostgres({ dataDir, port, logger });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await postgres.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("keeps the outcomes of sends that finished while it was away, writes them after, and sends nothing twice", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.on("/slow", (_request, res) => void gate.then(() => res.writeHead(200).end("ok")));
    const service = await startTestService(
      { DELIVERY_LEASE_MS: "3000", DELIVERY_TIMEOUT_MS: "1000", DELIVERY_POLL_INTERVAL_MS: "100" },
      {
        database: {
          name: "postgres",
          url: postgres.url,
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
      await postgres.stop();
      release();
      // The five sends end (no delivery in flight any more) while the database is still away.
      await waitUntil("(await metrics.inFlight.get()).values[0]?.value === 0", async () =>
        (await metrics.inFlight.get()).values[0]?.value === 0 ? true : undefined,
      );
      postgres = await startEmbeddedPostgres({ dataDir, port, logger });
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
