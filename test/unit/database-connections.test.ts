import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConnectionEpisodes } from "../../src/db/connection-episodes.js";
import { answerGraceMs, connectionOptions, type DatabaseTimeouts } from "../../src/db/connection-options.js";

// What every connection of the service is opened with, and how its failures reach the log: once when
// an episode starts, once when it ends. The behaviour against a silent network:
// test/integration/silent-database.test.ts.

const timeouts: DatabaseTimeouts = {
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 15_000,
  lockTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 30_000,
  keepAliveIdleMs: 10_000,
};

function captured() {
  const lines: {
    level: number;
    msg: string;
    failures?: number;
    error?: { message: string; code?: string };
  }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: pino({ level: "info" }, sink) };
}

describe("connection options", () => {
  it.each(["api", "engine", "listener", "leader", "migrations", "readyz"] as const)(
    "names the %s role's connections and bounds them",
    (role) => {
      const options = connectionOptions("postgres://u:p@db/x", role, timeouts);
      expect(options).toMatchObject({
        application_name: `webhook-operator-${role}`,
        connectionTimeoutMillis: 5_000,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
        statement_timeout: 15_000,
        lock_timeout: 5_000,
        idle_in_transaction_session_timeout: 30_000,
        query_timeout: 15_000 + answerGraceMs,
      });
    },
  );

  it("sets no timeout when given none (tools and tests), only the name", () => {
    expect(connectionOptions("postgres://db/x", "cli")).toEqual({
      connectionString: "postgres://db/x",
      application_name: "webhook-operator-cli",
    });
  });
});

describe("connection episodes", () => {
  it("logs the first failure and the recovery, not each failure", async () => {
    const { lines, logger } = captured();
    const episodes = new ConnectionEpisodes("api", logger);
    episodes.answered();
    for (let i = 0; i < 5; i++)
      episodes.failed(Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" }));
    expect(episodes.failing).toBe(true);
    episodes.answered();
    episodes.answered();
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, "database connections (api) failing; logged once until they recover"],
      [30, "database connections (api) recovered"],
    ]);
    expect(lines[0]?.error).toEqual({ message: "connect ETIMEDOUT", code: "ETIMEDOUT" });
    expect(lines[1]?.failures).toBe(5);
  });

  it("starts a new episode after a recovery", () => {
    const { lines, logger } = captured();
    const episodes = new ConnectionEpisodes("engine", logger);
    episodes.failed(new Error("Query read timeout"));
    episodes.answered();
    episodes.failed(new Error("Query read timeout"));
    expect(lines.map((line) => line.msg)).toEqual([
      "database connections (engine) failing; logged once until they recover",
      "database connections (engine) recovered",
      "database connections (engine) failing; logged once until they recover",
    ]);
    expect(episodes.failing).toBe(true);
  });
});
