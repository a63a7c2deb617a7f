import { readdir, readFile } from "node:fs/promises";
import { version as thisVersion } from "../version.js";
import type { Pool } from "./pool.js";
import { withTransaction } from "./pool.js";
import { isAlreadyCreated, isUniqueViolation } from "./sqlstate.js";

const migrationsDir = new URL("./migrations/", import.meta.url);

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/**
 * Numbers no migration has: 006 was given to a change developed beside 005 and 007 that never landed,
 * and numbers are never reused (a database that ran a build of that branch would skip a reused one).
 * A gap is harmless: migrations run in order of number and each database records the ids it applied.
 * The migrations test fails on any other gap, so a missing file cannot go unnoticed.
 */
export const numbersNeverUsed: readonly number[] = [6];

/** Numbered, forward-only files: `001_initial_schema.sql`, `002_…`. */
export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(migrationsDir)).filter((file) => /^\d+_.+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({
      id: Number.parseInt(file, 10),
      name: file.replace(/\.sql$/, ""),
      sql: await readFile(new URL(file, migrationsDir), "utf8"),
    })),
  );
}

interface AppliedRow {
  id: number;
  name: string;
  app_version: string | null;
}

/**
 * A database that a newer version migrated past the files this version has. Migrations only go
 * forward, so starting would run this version's statements on a schema it was never tested on; it
 * stops instead, saying which versions are involved and the two ways out (docs/upgrading.md).
 */
export class DatabaseNewerThanVersionError extends Error {
  constructor(unknown: AppliedRow[], known: Migration[], version: string) {
    const newer = unknown.findLast((row) => row.app_version)?.app_version;
    const by = newer ? `webhook-operator ${newer}` : "a newer webhook-operator";
    const last = known.at(-1)?.name ?? "none";
    super(
      `The database was migrated by ${by}: it has migration${unknown.length > 1 ? "s" : ""} ` +
        `${unknown.map((row) => row.name).join(", ")}, which webhook-operator ${version} does not know ` +
        `(its newest is ${last}). Migrations only go forward, so ${version} cannot run on this database. ` +
        `Run ${newer ?? "the newer version"} (or later) again, or, to go back to ${version}, restore the ` +
        "database backup taken before the upgrade (docs/upgrading.md, Downgrades).",
    );
    this.name = "DatabaseNewerThanVersionError";
  }
}

/** The bookkeeping table, and its app_version column, which versions before 0.2.0 did not write. */
async function ensureMigrationsTable(pool: Pool): Promise<void> {
  await pool
    .query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      app_version text)`)
    .catch((error: unknown) => {
      // IF NOT EXISTS is not atomic under concurrency: the loser of the race sees a catalog conflict.
      if (!isAlreadyCreated(error)) throw error;
    });
  // Looked up first: ALTER TABLE locks the table even when the column is there, on every start.
  const { rowCount } = await pool.query(
    `SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'app_version'`,
  );
  if (rowCount === 0)
    await pool.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS app_version text");
}

/**
 * Applies pending migrations, each in its own transaction, recording the version that applied it. The
 * migration row is inserted first, so when two replicas start at once the second blocks on the primary
 * key until the first commits, then fails with a unique violation and moves on instead of applying the
 * file twice. Refuses (DatabaseNewerThanVersionError) a database with migrations this version lacks.
 */
export async function migrate(pool: Pool, version = thisVersion): Promise<string[]> {
  await ensureMigrationsTable(pool);
  const migrations = await loadMigrations();
  const known = new Set(migrations.map((migration) => migration.id));
  const { rows } = await pool.query<AppliedRow>(
    "SELECT id, name, app_version FROM schema_migrations ORDER BY id",
  );
  const unknown = rows.filter((row) => !known.has(row.id));
  if (unknown.length > 0) throw new DatabaseNewerThanVersionError(unknown, migrations, version);

  const applied = new Set(rows.map((row) => row.id));
  const newlyApplied: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    try {
      await withTransaction(pool, async (client) => {
        await client.query("INSERT INTO schema_migrations (id, name, app_version) VALUES ($1, $2, $3)", [
          migration.id,
          migration.name,
          version,
        ]);
        await client.query(migration.sql);
      });
      newlyApplied.push(migration.name);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  return newlyApplied;
}
