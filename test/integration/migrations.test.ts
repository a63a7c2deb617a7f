import { afterEach, describe, expect, it } from "vitest";
import { loadMigrations, migrate, numbersNeverUsed } from "../../src/db/migrate.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function emptyDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase({ empty: true });
  cleanups.push(() => database.drop());
  return database;
}

function pool(database: TestDatabase): Pool {
  const created = createPool(database.url, 2);
  cleanups.push(() => created.end());
  return created;
}

async function appliedRows(db: Pool): Promise<{ id: number; name: string }[]> {
  const { rows } = await db.query<{ id: number; name: string }>(
    "SELECT id, name FROM schema_migrations ORDER BY id",
  );
  return rows;
}

describe("migrate()", () => {
  it("finds numbered migration files", async () => {
    const migrations = await loadMigrations();
    expect(migrations.length).toBeGreaterThanOrEqual(1);
    expect(migrations.map((m) => m.id)).toEqual(
      [...new Set(migrations.map((m) => m.id))].sort((a, b) => a - b),
    );
    for (const migration of migrations) expect(migration.sql.length).toBeGreaterThan(0);
  });

  it("has a file for every number up to the newest but those never used, each explained", async () => {
    const ids = (await loadMigrations()).map((m) => m.id);
    const newest = Math.max(...ids);
    const missing = Array.from({ length: newest }, (_, i) => i + 1).filter((id) => !ids.includes(id));
    expect(missing).toEqual([...numbersNeverUsed]);
  });

  // Repeated on fresh databases: the race between the two callers goes differently each time.
  it.each([1, 2, 3])(
    "applies every migration exactly once when two processes migrate an empty database at once (round %i)",
    async () => {
      const migrations = await loadMigrations();
      const database = await emptyDatabase();
      const first = pool(database);
      const second = pool(database);
      expect((await first.query("SELECT to_regclass('public.schema_migrations') AS t")).rows[0].t).toBeNull();

      const [appliedByFirst, appliedBySecond] = await Promise.all([migrate(first), migrate(second)]);

      // Each file was applied by exactly one of the two callers.
      const applied = [...appliedByFirst, ...appliedBySecond].sort();
      expect(applied).toEqual(migrations.map((m) => m.name).sort());

      expect(await appliedRows(first)).toEqual(migrations.map((m) => ({ id: m.id, name: m.name })));
      // The schema is really there.
      const tables = await first.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining([
          "projects",
          "webhooks",
          "deliveries",
          "events",
          "api_keys",
          "schema_migrations",
        ]),
      );

      // A later start applies nothing and changes nothing.
      const third = pool(database);
      expect(await migrate(third)).toEqual([]);
      expect(await appliedRows(third)).toHaveLength(migrations.length);
    },
  );

  it("016 takes credentials out of webhook URLs stored before they were refused everywhere", async () => {
    const db = pool(await emptyDatabase());
    await db.query("CREATE TABLE schema_migrations (id integer PRIMARY KEY, name text NOT NULL)");
    for (const migration of (await loadMigrations()).filter((m) => m.id < 16)) {
      await db.query(migration.sql);
      await db.query("INSERT INTO schema_migrations (id, name) VALUES ($1, $2)", [
        migration.id,
        migration.name,
      ]);
    }
    await db.query("INSERT INTO projects (name, slug) VALUES ('P', 'p')");
    const urls = [
      "http://user:pw@x.example.com/h",
      "https://a%40b:p@ss@hooks.example.com:8443/deploys?x=1",
      "https://hooks.example.com/path@not-credentials",
      "https://hooks.example.com/h",
    ];
    for (const url of urls) {
      await db.query(
        "INSERT INTO webhooks (project_id, url, events, enabled) VALUES (1, $1, '{deployment.created}', true)",
        [url],
      );
    }
    expect(await migrate(db)).toContain("016_webhook_urls_without_credentials");
    const { rows } = await db.query<{ url: string }>("SELECT url FROM webhooks ORDER BY id");
    expect(rows.map((row) => row.url)).toEqual([
      "http://x.example.com/h",
      "https://hooks.example.com:8443/deploys?x=1",
      "https://hooks.example.com/path@not-credentials",
      "https://hooks.example.com/h",
    ]);
  });
});
