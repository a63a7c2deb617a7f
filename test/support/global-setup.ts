import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { createPool } from "../../src/db/pool.js";
import { createLogger } from "../../src/logger.js";
import { templateDatabase } from "./database.js";
import { freePort } from "./ports.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A connection URL to a server where tests may create databases (maintenance db `postgres`). */
    databaseAdminUrl: string;
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * One Postgres for the whole run: DATABASE_URL when set (CI's PostgreSQL 15), otherwise an embedded
 * server in a temporary directory. A template database is migrated once; each test file copies it.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let cleanup = async () => {};
  if (!adminUrl) {
    const dataDir = await mkdtemp(path.join(tmpdir(), "wo-test-pg-"));
    const embedded = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      logger: createLogger("silent"),
    });
    adminUrl = embedded.url;
    cleanup = async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  await admin.end();
  const pool = createPool(withDatabase(adminUrl, templateDatabase), 2);
  await migrate(pool);
  await pool.end();

  project.provide("databaseAdminUrl", adminUrl);
  return cleanup;
}
