import pg from "pg";
import type { ConnectionEpisodes } from "./connection-episodes.js";

// Errors that mean the database did not answer at all (refused, reset, timed out, dropped), as opposed
// to an error Postgres reported. pg gives them no code to tell them by, so they are noted where they
// come out of a connection: in the pool's connect and in each client's query.
const unreachable = new WeakSet<object>();

/** Whether `error` came from a connection that failed, not from Postgres answering (API: 503). */
export function isDatabaseUnreachable(error: unknown): boolean {
  return typeof error === "object" && error !== null && unreachable.has(error);
}

function noteFailure(error: unknown, episodes: ConnectionEpisodes): void {
  if (typeof error === "object" && error !== null) unreachable.add(error);
  episodes.failed(error);
}

/**
 * How long ending a connection may wait for Postgres to close its side. On a silent network it never
 * does (its goodbye is dropped), and a pool's end, so a shutdown, would wait as long as TCP keeps trying.
 */
const endGraceMs = 1_000;

/** Closes `client`'s socket unless its graceful end finished within `ms` (then this does nothing). */
export function closeWithin(client: pg.Client, ms: number): void {
  setTimeout(() => client.connection.stream.destroy(), ms).unref();
}

type QueryCallback = (error: Error | undefined, result: unknown) => void;

/**
 * A pg.Client that tells `episodes` whether its queries got an answer. One that got none is given up
 * at once (its socket closed): its query may still be on the wire, and a client left that way would
 * make the next query wait behind it; closed, the pool drops it on release (or when idle) instead of
 * lending it out again. Its errors are always listened to, so a connection lost while lent out (where
 * the pool does not listen) cannot take the process down. Once it is being ended, what it reports is
 * no failure: a shutdown ends the pools, then Postgres, whose goodbye ("terminating connection due to
 * administrator command") can reach a connection whose own goodbye it has not read yet.
 */
function observedClient(episodes: ConnectionEpisodes): typeof pg.Client {
  return class ObservedClient extends pg.Client {
    private endRequested = false;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on("error", (error) => {
        if (!this.endRequested) noteFailure(error, episodes);
      });
    }

    private settle(error: unknown): void {
      if (error === undefined || error === null || error instanceof pg.DatabaseError) {
        episodes.answered();
        return;
      }
      noteFailure(error, episodes);
      this.connection.stream.destroy();
    }

    override end(): Promise<void>;
    override end(callback: (error: Error) => void): void;
    override end(callback?: (error: Error) => void): Promise<void> | undefined {
      this.endRequested = true;
      closeWithin(this, endGraceMs);
      if (!callback) return super.end();
      super.end(callback);
      return undefined;
    }

    // biome-ignore lint/suspicious/noExplicitAny: forwards each of pg's query forms unchanged
    override query(...args: any[]): any {
      const last = args.length - 1;
      const callback = args[last] as unknown;
      if (typeof callback === "function") {
        args[last] = ((error, result) => {
          this.settle(error);
          (callback as QueryCallback)(error, result);
        }) satisfies QueryCallback;
        return Reflect.apply(pg.Client.prototype.query, this, args);
      }
      const result: unknown = Reflect.apply(pg.Client.prototype.query, this, args);
      if (!(result instanceof Promise)) return result; // a Submittable (a cursor, a stream)
      return result.then(
        (value: unknown) => {
          this.settle(undefined);
          return value;
        },
        (error: unknown) => {
          this.settle(error);
          throw error;
        },
      );
    }
  };
}

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: () => void,
) => void;

/**
 * pg's Pool whose connection failures (a connect refused or timed out, a query with no answer, an idle
 * connection found dead) are noted for isDatabaseUnreachable and counted in `episodes`, and whose
 * successes end an episode. A client whose query got no answer is released as broken by the pool
 * (pool.query) or by withTransaction, so it is closed, never lent out again.
 */
export function observedPool(config: pg.PoolConfig, episodes: ConnectionEpisodes): pg.Pool {
  class ObservedPool extends pg.Pool {
    override connect(): Promise<pg.PoolClient>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
      if (callback) {
        // pool.query comes this way too.
        super.connect((error, client, done) => {
          if (error) noteFailure(error, episodes);
          callback(error, client, done);
        });
        return undefined;
      }
      return super.connect().catch((error: unknown) => {
        noteFailure(error, episodes);
        throw error;
      });
    }
  }
  const pool = new ObservedPool({ ...config, Client: observedClient(episodes) });
  // An idle connection lost (a database restart, keepalive probes unanswered): the pool has already
  // dropped it and makes a new one on next use; the client itself noted the failure.
  pool.on("error", () => {});
  pool.on("connect", () => episodes.answered());
  return pool;
}
