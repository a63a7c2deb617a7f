import { Writable } from "node:stream";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { type RunningService, startService } from "../../src/app/service.js";
import { isDatabaseUnreachable } from "../../src/db/observed-pool.js";
import { createPool, withTransaction } from "../../src/db/pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type SilentRelay, startSilentRelay } from "../support/silent-relay.js";
import { waitUntil } from "../support/wait.js";

// A database whose network goes silent (packets dropped, not refused): connections time out, the API
// answers 503 instead of hanging, /readyz answers 503 and is ready again as soon as new connections
// pass, though the old ones stay silent for good; each role logs one line when its connections start
// failing and one when they answer again. The timings themselves are the reliability suite's
// (`blackhole`); here only what is answered.

const adminKey = "test-admin-key-0123456789";
let database: TestDatabase;
let relay: SilentRelay;
let service: RunningService;
const logLines: { msg: string; role?: string; failures?: number }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  relay = await startSilentRelay(database.url);
  const config = loadConfig({
    DATABASE_URL: relay.url,
    API_KEY: adminKey,
    HOST: "127.0.0.1",
    PORT: "0",
    DATABASE_CONNECT_TIMEOUT_MS: "500",
    DATABASE_STATEMENT_TIMEOUT_MS: "500",
    DATABASE_READY_TIMEOUT_MS: "500",
  });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  service = await startService(config, pino({ level: "info" }, sink), { kubeConfig: undefined });
});
afterAll(async () => {
  // With connections still stranded on the silent path: closing must not wait for their goodbyes.
  await service?.close();
  await relay?.close();
  await database?.drop();
});

const get = async (path: string) => {
  const response = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${adminKey}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const episodeLines = (role: string, start: boolean) =>
  logLines.filter(
    (line) =>
      line.role === role &&
      line.msg ===
        `database connections (${role}) ${start ? "failing; logged once until they recover" : "recovered"}`,
  );

describe("a database that goes silent", () => {
  it("names each role's connections in pg_stat_activity", async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const names = await waitUntil("the api, engine, listener and readyz connections", async (saw) => {
        await get("/readyz");
        await get("/api/projects");
        const { rows } = await admin.query<{ name: string }>(
          "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1",
        );
        const seen = rows.map((row) => row.name);
        saw(seen);
        const wanted = ["api", "engine", "listener", "readyz"].map((role) => `webhook-operator-${role}`);
        return wanted.every((name) => seen.includes(name)) ? seen : undefined;
      });
      expect(names.filter((name) => !name.startsWith("webhook-operator-"))).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it("answers 503 on the API and /readyz while silent, and is ready again once new connections pass", async () => {
    expect((await get("/api/projects")).status).toBe(200);
    relay.silence();
    // Several at once, each failing its own way: a pooled connection that never answers, a new one
    // whose handshake never completes, a wait for a free connection.
    const during = await Promise.all([get("/api/projects"), get("/api/projects"), get("/api/projects")]);
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({
        error: { code: "unavailable", message: "The database did not answer in time. Try again shortly." },
      });
    }
    const probes = await Promise.all([get("/readyz"), get("/readyz"), get("/readyz")]);
    expect(probes.map((probe) => probe.status)).toEqual([503, 503, 503]);

    // The connections that fell silent stay so: ready again means none of them was waited on.
    relay.restore();
    await waitUntil("/readyz ready again", async () =>
      (await get("/readyz")).status === 200 ? true : undefined,
    );
    await waitUntil("the API answering again", async () =>
      (await get("/api/projects")).status === 200 ? true : undefined,
    );
    expect(episodeLines("api", true)).toHaveLength(1);
    expect(episodeLines("api", false)).toHaveLength(1);
    expect(episodeLines("api", false)[0]?.failures).toBeGreaterThanOrEqual(3);
  });
});

const quickTimeouts = {
  connectTimeoutMs: 200,
  statementTimeoutMs: 200,
  lockTimeoutMs: 200,
  idleInTransactionTimeoutMs: 1_000,
  keepAliveIdleMs: 1_000,
};

describe("a server that accepts connections and never answers", () => {
  it("fails a connection attempt at the connect timeout, as unreachable", async () => {
    const silent = await startSilentRelay(database.url);
    silent.silence();
    const pool = createPool(silent.url, 1, {}, { role: "api", timeouts: quickTimeouts });
    try {
      const failure = await pool.query("SELECT 1").catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(isDatabaseUnreachable(failure)).toBe(true);
      expect(pool.totalCount).toBe(0);
    } finally {
      await pool.end();
      await silent.close();
    }
  });

  it("gives up a transaction that got no answer without keeping its connection", async () => {
    const path = await startSilentRelay(database.url);
    const pool = createPool(path.url, 1, {}, { role: "api", timeouts: quickTimeouts });
    try {
      const failure = await withTransaction(pool, async (client) => {
        await client.query("SELECT 1");
        path.silence();
        await client.query("SELECT 2");
      }).catch((error: unknown) => error);
      expect(isDatabaseUnreachable(failure)).toBe(true);
      path.restore();
      // One connection in the pool: had the silent one gone back, this would wait behind its query.
      expect((await pool.query<{ ok: number }>("SELECT 1 AS ok")).rows).toEqual([{ ok: 1 }]);
    } finally {
      await pool.end();
      await path.close();
    }
  });

  it("tells a database error from no answer", async () => {
    const pool = createPool(database.url, 1);
    try {
      const failure = await pool.query("SELECT * FROM no_such_table").catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(pg.DatabaseError);
      expect(isDatabaseUnreachable(failure)).toBe(false);
    } finally {
      await pool.end();
    }
  });
});

describe("a connection ended by the service", () => {
  it("reports what Postgres says after its end as no failure; the same on a live connection is one", async () => {
    const lines: { msg: string; role?: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const pool = createPool(database.url, 2, {}, { role: "engine", logger: pino({ level: "info" }, sink) });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const failing = () =>
      lines.filter(
        (line) => line.msg === "database connections (engine) failing; logged once until they recover",
      );
    const live = await pool.connect();
    try {
      const ending = await pool.connect();
      // A shutdown ends the pools, then Postgres: its goodbye can reach a connection still closing.
      ending.release(true);
      ending.emit(
        "error",
        Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      );
      expect(failing()).toEqual([]);
      // The same goodbye, for real, to a connection nobody ended: Postgres went away under it.
      const { rows } = await live.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]?.pid]);
      await waitUntil("the live connection's failure logged", async () =>
        failing().length === 1 ? true : undefined,
      );
    } finally {
      live.release(true);
      await pool.end();
      await admin.end();
    }
  });
});
