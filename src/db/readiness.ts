import { abortable } from "../abortable.js";
import type { Pool } from "./pool.js";

/** Whether Postgres answered `SELECT 1` within the bound. */
export type DatabaseReadiness = () => Promise<boolean>;

/**
 * /readyz's question to Postgres, answered within `boundMs` however the network behaves, leaving
 * nothing behind: the wait for a connection and the query share the bound; a connection that comes too
 * late goes straight back, and one whose query got no answer in time is released as broken, which
 * closes it rather than returning it to the pool. Give it a pool of its own (as the service does) so a
 * probe never waits behind the API's queries, nor holds one of their connections.
 */
export function databaseReadiness(pool: Pool, boundMs: number): DatabaseReadiness {
  return async () => {
    const deadline = Date.now() + boundMs;
    const connecting = pool.connect();
    const client = await settledBy(connecting, deadline);
    if (!client) {
      connecting.then(
        (late) => late.release(),
        () => {},
      );
      return false;
    }
    const answered = await settledBy(
      client.query("SELECT 1").then(() => true),
      deadline,
    );
    client.release(answered ? undefined : new Error(`no answer to SELECT 1 within ${boundMs} ms`));
    return answered === true;
  };
}

/** What `promise` resolves to if it does by `deadline`; undefined when it rejects or is late. */
function settledBy<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  return abortable(promise, AbortSignal.timeout(Math.max(0, deadline - Date.now()))).catch(() => undefined);
}
