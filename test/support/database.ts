import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

export const templateDatabase = "wo_test_template";

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject("databaseAdminUrl") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database copied from the migrated template (or empty, to test migrations themselves). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `wo_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name}${options.empty ? "" : ` TEMPLATE ${templateDatabase}`}`);
  const url = new URL(inject("databaseAdminUrl"));
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
