import type pg from "pg";
import { waitUntil } from "./wait.js";

type Queryable = Pick<pg.ClientBase, "query">;

/**
 * Waits until Postgres says a backend is waiting for a lock that `holder`'s backend holds
 * (pg_blocking_pids over pg_stat_activity): the proof that a statement is blocked, where a pause would
 * only guess it. `observer` is another connection (the holder's is busy holding).
 */
export async function blockedBy(observer: Queryable, holder: Queryable): Promise<void> {
  const { rows } = await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const holderPid = rows[0]?.pid;
  await waitUntil(`a backend waiting for a lock of backend ${holderPid}`, async (saw) => {
    const waiting = await observer.query(
      `SELECT pid, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity
        WHERE $1 = ANY (pg_blocking_pids(pid))`,
      [holderPid],
    );
    saw(waiting.rows);
    return waiting.rows.length > 0 ? true : undefined;
  });
}
