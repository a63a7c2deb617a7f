import pg from "pg";

export type Pool = pg.Pool;
/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

// bigint columns (ids, counts) come back as strings by default; every id we hand out fits in a JS
// number (identity columns start at 1 and grow by 1), so parse them as numbers once, here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
// bigint[] (e.g. api_keys.project_ids) likewise, through the text[] parser.
// pg's TypeId enum does not name the array types: 1016 is bigint[], 1009 is text[].
type TypeId = Parameters<typeof pg.types.getTypeParser>[0];
const int8ArrayOid = 1016 as TypeId;
const parseTextArray = pg.types.getTypeParser(1009 as TypeId) as (value: string) => string[];
pg.types.setTypeParser(int8ArrayOid, (value: string) =>
  parseTextArray(value).map((item) => Number.parseInt(item, 10)),
);

/** `settings` are applied to every connection of the pool (`-c name=value` at connect time). */
export function createPool(
  connectionString: string,
  max: number,
  settings: Record<string, string> = {},
): Pool {
  const options = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ");
  const pool = new pg.Pool({ connectionString, max, ...(options ? { options } : {}) });
  // An idle client losing its connection (database restart) must not crash the process; the pool
  // replaces it on next use.
  pool.on("error", () => {});
  return pool;
}

/** Runs fn in a transaction on one client: committed when fn resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
