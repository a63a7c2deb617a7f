import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { engineSqlDirectory } from "../../scripts/engine-sql/render.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { repoRoot } from "../support/tools.js";

// The engine's statements as files (src/delivery-engine/sql/, test/unit/engine-sql.test.ts keeps them
// equal to the code's) are laid out for reading: Postgres still takes each one as it reads, on the
// migrated schema, so a reader can run what they read.

let database: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await database.drop();
});

const files = readdirSync(path.join(repoRoot, engineSqlDirectory)).filter((file) => file.endsWith(".sql"));

it.each(files)("Postgres prepares %s", async (file) => {
  const text = readFileSync(path.join(repoRoot, engineSqlDirectory, file), "utf8");
  const name = file.replace(/\.sql$/, "");
  await client.query(`PREPARE "${name}" AS ${text}`);
  const { rows } = await client.query("SELECT name FROM pg_prepared_statements WHERE name = $1", [name]);
  expect(rows).toHaveLength(1);
});
