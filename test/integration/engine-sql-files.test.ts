import { readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadSqlStatement } from "../../src/db/sql-statement.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { repoRoot } from "../support/tools.js";

// The engine's statements are files written by hand (src/delivery-engine/sql/); Postgres takes each one
// as it reads, on the migrated schema, every parameter's type told by the file itself.

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

const directory = path.join(repoRoot, "src/delivery-engine/sql");
const files = readdirSync(directory).filter((file) => file.endsWith(".sql"));

it.each(files)("Postgres prepares %s, knowing every parameter's type", async (file) => {
  const statement = loadSqlStatement(pathToFileURL(path.join(directory, file)));
  await client.query(`PREPARE "${statement.name}" AS ${statement.text}`);
  const { rows } = await client.query<{ types: string[] }>(
    "SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = $1",
    [statement.name],
  );
  expect(rows[0]?.types).toHaveLength(statement.parameters.length);
  expect(rows[0]?.types).not.toContain("unknown");
});
