import pg from "pg";
import type { Logger } from "../logger.js";
import { ConnectionEpisodes } from "./connection-episodes.js";
import { connectionOptions, type DatabaseRole, type DatabaseTimeouts } from "./connection-options.js";
import { isDatabaseUnreachable, observedPool } from "./observed-pool.js";

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

/** Who a pool is for: its role names its connections; with `timeouts` none of them can hang. */
export interface PoolConnection {
  role: DatabaseRole;
  timeouts?: DatabaseTimeouts | undefined;
  /** Where a role's connection failures are logged, once per episode. */
  logger?: Logger | undefined;
  /** Episodes shared with the role's other pools (one warning for them all); the pool's own otherwise. */
  episodes?: ConnectionEpisodes | undefined;
}

/**
 * `settings` are applied to every connection of the pool (`-c name=value` at connect time). Without
 * `connection` (tools, tests) the pool's connections are named `webhook-operator-api` and wait as long
 * as pg's defaults let them.
 */
export function createPool(
  connectionString: string,
  max: number,
  settings: Record<string, string> = {},
  connection: PoolConnection = { role: "api" },
): Pool {
  const options = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ");
  return observedPool(
    {
      ...connectionOptions(connectionString, connection.role, connection.timeouts),
      max,
      ...(options ? { options } : {}),
    },
    connection.episodes ?? new ConnectionEpisodes(connection.role, connection.logger),
  );
}

/** Runs fn in a transaction on one client: committed when fn resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    client.release();
    return result;
  } catch (error) {
    // No answer: the connection is closed (Postgres rolls back when it sees it go, or when its
    // idle-in-transaction timeout ends the session); a ROLLBACK would wait just as long for nothing.
    // A ROLLBACK that fails leaves the connection in doubt: it is closed too.
    const broken = isDatabaseUnreachable(error)
      ? error
      : await client.query("ROLLBACK").then(
          () => undefined,
          (rollbackError: unknown) => rollbackError,
        );
    client.release(broken === undefined ? undefined : (broken as Error));
    throw error;
  }
}
