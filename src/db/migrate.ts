import { readdir, readFile } from "node:fs/promises";
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

/**
 * Applies pending migrations, each in its own transaction. The migration row is inserted first, so
 * when two replicas start at once the second blocks on the primary key until the first commits, then
 * fails with a unique violation and moves on instead of applying the file twice.
 */
export async function migrate(pool: Pool): Promise<string[]> {
  await pool
    .query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`)
    .catch((error: unknown) => {
      // IF NOT EXISTS is not atomic under concurrency: the loser of the race sees a catalog conflict.
      if (!isAlreadyCreated(error)) throw error;
    });

  const applied = new Set(
    (await pool.query<{ id: number }>("SELECT id FROM schema_migrations")).rows.map((row) => row.id),
  );
  const newlyApplied: string[] = [];
  for (const migration of await loadMigrations()) {
    if (applied.has(migration.id)) continue;
    try {
      await withTransaction(pool, async (client) => {
        await client.query("INSERT INTO schema_migrations (id, name) VALUES ($1, $2)", [
          migration.id,
          migration.name,
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
