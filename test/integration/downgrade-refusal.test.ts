import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { DatabaseNewerThanVersionError, loadMigrations, migrate } from "../../src/db/migrate.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { version } from "../../src/version.js";
import { assertBuilt } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// Going back a version (helm rollback, an older image on the same database): a database migrated past
// the files a version knows is refused at start-up with a message naming both versions and the way
// out, and nothing in it changes. The version that applied each migration is recorded for that.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function database(): Promise<{ db: TestDatabase; pool: Pool }> {
  const db = await createTestDatabase({ empty: true });
  const pool = createPool(db.url, 2);
  cleanups.push(async () => {
    await pool.end();
    await db.drop();
  });
  return { db, pool };
}

const rows = async (pool: Pool) =>
  (await pool.query("SELECT id, name, app_version FROM schema_migrations ORDER BY id")).rows;

/** As a later version would leave it: every migration of this one, then one more, applied by 9.0.0. */
async function migratedByNewer(pool: Pool): Promise<void> {
  await migrate(pool);
  await pool.query(
    "INSERT INTO schema_migrations (id, name, app_version) VALUES (900, '900_from_a_later_version', '9.0.0')",
  );
}

describe("the version that migrated a database", () => {
  it("is recorded with each migration it applied", async () => {
    const { pool } = await database();
    await migrate(pool, "1.2.3");
    const applied = await rows(pool);
    expect(applied).toHaveLength((await loadMigrations()).length);
    expect(new Set(applied.map((row) => row.app_version))).toEqual(new Set(["1.2.3"]));
  });

  it("is added to the bookkeeping of a database made before it was recorded, whose rows keep none", async () => {
    const { pool } = await database();
    // What versions before 0.2.0 made: no app_version column.
    await pool.query(
      "CREATE TABLE schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const [first, ...rest] = await loadMigrations();
    if (!first) throw new Error("no migrations");
    await pool.query(first.sql);
    await pool.query("INSERT INTO schema_migrations (id, name) VALUES ($1, $2)", [first.id, first.name]);
    expect(await migrate(pool, "0.2.0")).toEqual(rest.map((m) => m.name));
    const applied = await rows(pool);
    expect(applied[0]).toEqual({ id: first.id, name: first.name, app_version: null });
    expect(applied.slice(1).every((row) => row.app_version === "0.2.0")).toBe(true);
    // The older version's insert still works on it: the column may stay empty.
    await pool.query("INSERT INTO schema_migrations (id, name) VALUES (901, '901_x')");
  });
});

describe("a database migrated past what this version knows", () => {
  it("is refused by migrate() with both versions named, and left as it was", async () => {
    const { pool } = await database();
    await migratedByNewer(pool);
    const before = await rows(pool);
    const newest = (await loadMigrations()).at(-1)?.name;
    const refusal = migrate(pool, "0.2.0");
    await expect(refusal).rejects.toBeInstanceOf(DatabaseNewerThanVersionError);
    await expect(refusal).rejects.toThrow(
      "The database was migrated by webhook-operator 9.0.0: it has migration 900_from_a_later_version, " +
        `which webhook-operator 0.2.0 does not know (its newest is ${newest}). Migrations only go forward, ` +
        "so 0.2.0 cannot run on this database. Run 9.0.0 (or later) again, or, to go back to 0.2.0, restore " +
        "the database backup taken before the upgrade (docs/upgrading.md, Downgrades).",
    );
    expect(await rows(pool)).toEqual(before);
  });

  it("says only 'a newer webhook-operator' when that version did not record itself", async () => {
    const { pool } = await database();
    await migrate(pool);
    await pool.query("INSERT INTO schema_migrations (id, name) VALUES (900, '900_a'), (901, '901_b')");
    await expect(migrate(pool, "0.2.0")).rejects.toThrow(
      /^The database was migrated by a newer webhook-operator: it has migrations 900_a, 901_b, .* Run the newer version \(or later\) again/,
    );
  });

  it("stops the service at start-up, before it serves, with that message in its log", async () => {
    assertBuilt();
    const { db, pool } = await database();
    await migratedByNewer(pool);
    const child = spawn(process.execPath, ["dist/server/main.js", "serve", "--no-kubernetes"], {
      env: {
        PATH: process.env.PATH,
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: db.url,
        API_KEY: "downgrade-test-admin-key-1234",
        SECRET_ENCRYPTION_KEYS: Buffer.alloc(32, 1).toString("base64"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code, output).not.toBe(0);
    expect(output).toContain(
      `webhook-operator failed to start: The database was migrated by webhook-operator 9.0.0: it has migration 900_from_a_later_version, which webhook-operator ${version} does not know`,
    );
    expect(output).not.toContain("listening on");
    expect(await rows(pool)).toHaveLength((await loadMigrations()).length + 1);
  });
});
