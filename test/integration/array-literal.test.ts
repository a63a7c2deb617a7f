import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrayLiteral } from "../../src/db/array-literal.js";
// Read back as the application reads it: the pool module parses bigint and bigint[] as numbers, for
// every pg client in the process (as it does here whichever test file ran before this one).
import "../../src/db/pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await database.drop();
});

async function roundTrip(literal: string, type: string): Promise<unknown[]> {
  const { rows } = await client.query(`SELECT $1::${type} AS value`, [literal]);
  return rows[0].value;
}

describe("arrayLiteral", () => {
  it("is read back by Postgres as the same items, for every type the hot paths pass", async () => {
    expect(await roundTrip(arrayLiteral([1, 9_007_199_254_740_991, 42]), "bigint[]")).toEqual([
      1, 9_007_199_254_740_991, 42,
    ]);
    expect(await roundTrip(arrayLiteral([200, 0, 503]), "int[]")).toEqual([200, 0, 503]);
    expect(await roundTrip(arrayLiteral(["t", "f"]), "boolean[]")).toEqual([true, false]);
    expect(await roundTrip(arrayLiteral([1_732_172_470_123, 0.5]), "float8[]")).toEqual([
      1_732_172_470_123, 0.5,
    ]);
    const uuid = "0b6e1f7c-2f1a-4c55-9d1e-6f3a2b1c0d9e";
    expect(await roundTrip(arrayLiteral([uuid, null]), "uuid[]")).toEqual([uuid, null]);
    expect(await roundTrip(arrayLiteral(["deployment.created", "deployment.succeeded"]), "text[]")).toEqual([
      "deployment.created",
      "deployment.succeeded",
    ]);
    expect(await roundTrip(arrayLiteral([]), "bigint[]")).toEqual([]);
  });
});
