import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { migrate } from "../src/db/migrate.js";
import { createPool } from "../src/db/pool.js";
import { createLogger } from "../src/logger.js";
import { freePort } from "../test/support/ports.js";

/** A Postgres server where the benchmark may create databases. */
export interface BenchServer {
  /** What runs it: "embedded" or "BENCH_DATABASE_URL". */
  source: string;
  version: string;
  /** A fresh, migrated database for one scenario. */
  freshDatabase(label: string): Promise<BenchDatabase>;
  stop(): Promise<void>;
}

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery<T extends pg.QueryResultRow>(adminUrl: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** BENCH_DATABASE_URL's server when set, otherwise an embedded Postgres in a temporary directory. */
export async function startBenchServer(): Promise<BenchServer> {
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let source = "BENCH_DATABASE_URL";
  let stopServer = async () => {};
  if (!adminUrl) {
    const dataDir = await mkdtemp(path.join(tmpdir(), "wo-bench-pg-"));
    const embedded = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      logger: createLogger("silent"),
      // Statement and planning times per statement, for the Postgres time per event (bench/pg-time.ts).
      settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on" },
    });
    adminUrl = embedded.url;
    source = "embedded";
    stopServer = async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const admin = adminUrl;
  const [row] = await adminQuery<{ server_version: string }>(admin, "SHOW server_version");
  let created = 0;
  return {
    source,
    version: row?.server_version ?? "unknown",
    async freshDatabase(label) {
      created += 1;
      const name = `wo_bench_${process.pid}_${created}_${label.replace(/[^a-z0-9]+/gi, "_").toLowerCase()}`;
      await adminQuery(admin, `CREATE DATABASE ${name}`);
      const url = withDatabase(admin, name);
      const pool = createPool(url, 2);
      try {
        await migrate(pool);
        // Only where the server preloads it (the embedded one does); otherwise the figures are not printed.
        await pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").catch(() => {});
      } finally {
        await pool.end();
      }
      return {
        url,
        drop: () => adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => {}),
      };
    },
    stop: stopServer,
  };
}
