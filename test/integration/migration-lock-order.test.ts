import { afterEach, expect, it } from "vitest";
import { loadMigrations, migrate } from "../../src/db/migrate.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { createTestDatabase } from "../support/database.js";
import { waitUntil } from "../support/wait.js";

// An upgrade migrates while the older version's replicas still serve. Deleting a webhook takes the
// webhooks table, then (its trigger) the deliveries table; a migration that altered deliveries first
// and webhooks last made a cycle with such a delete, and Postgres failed the delete (seen as a 500 from
// the old replica's API in the node suite's upgrade). Here the interleaving is forced: a transaction
// holding scheduled_retries stops migration 020 part-way, a delete starts meanwhile, then both go on.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function pool(url: string): Pool {
  const created = createPool(url, 2);
  cleanups.push(() => created.end());
  return created;
}

/** The database as a replica of the version before migration 020 left it. */
async function migratedThrough(db: Pool, lastId: number): Promise<void> {
  await db.query(`CREATE TABLE schema_migrations (id integer PRIMARY KEY, name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(), app_version text)`);
  for (const migration of await loadMigrations()) {
    if (migration.id > lastId) break;
    await db.query(migration.sql);
    await db.query("INSERT INTO schema_migrations (id, name) VALUES ($1, $2)", [
      migration.id,
      migration.name,
    ]);
  }
}

async function waitingOnLocks(db: Pool, query: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE $1 AND datname = current_database()`,
    [`${query}%`],
  );
  return rows[0]?.n ?? 0;
}

it("lets an older replica delete a webhook while migration 020 alters webhooks and deliveries", async () => {
  const database = await createTestDatabase({ empty: true });
  cleanups.push(() => database.drop());
  const migrator = pool(database.url);
  const holder = pool(database.url);
  const oldReplica = pool(database.url);
  const observer = pool(database.url);
  await migratedThrough(migrator, 19);
  const project = await oldReplica.query<{ id: string }>(
    "INSERT INTO projects (name, slug) VALUES ('Shop', 'shop') RETURNING id",
  );
  const webhook = await oldReplica.query<{ id: string }>(
    `INSERT INTO webhooks (project_id, url, events, enabled)
     VALUES ($1, 'http://127.0.0.1:9/hook', '{deployment.created}', true) RETURNING id`,
    [project.rows[0]?.id],
  );

  const held = await holder.connect();
  cleanups.push(async () => held.release());
  await held.query("BEGIN");
  await held.query("LOCK TABLE scheduled_retries IN ACCESS SHARE MODE");

  const migrating = migrate(migrator);
  await waitUntil("migration 020 to wait for scheduled_retries", async (saw) => {
    const { rows } = await observer.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'scheduled_retries'::regclass AND NOT granted`,
    );
    const waiting = rows[0]?.n ?? 0;
    saw(waiting);
    return waiting > 0 ? true : undefined;
  });
  const deleting = oldReplica.query("DELETE FROM webhooks WHERE id = $1", [webhook.rows[0]?.id]);
  await waitUntil("the delete to wait for a lock", async (saw) => {
    const n = await waitingOnLocks(observer, "DELETE FROM webhooks");
    saw(n);
    return n > 0 ? true : undefined;
  });
  await held.query("COMMIT");

  const [migrated, deleted] = await Promise.allSettled([migrating, deleting]);
  expect(migrated.status).toBe("fulfilled");
  expect(deleted.status === "rejected" ? String(deleted.reason) : "deleted").toBe("deleted");
  const { rows } = await observer.query("SELECT id FROM webhooks");
  expect(rows).toEqual([]);
});
