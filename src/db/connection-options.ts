import type pg from "pg";

/** Who holds a connection: it shows in `pg_stat_activity.application_name` as `webhook-operator-<role>`. */
export type DatabaseRole = "api" | "engine" | "listener" | "leader" | "migrations" | "readyz" | "cli";

/** The bounds every connection of the service keeps (DATABASE_*_TIMEOUT_MS, docs/operating.md). */
export interface DatabaseTimeouts {
  /** A new connection's handshake, and the wait for a free pooled connection. */
  connectTimeoutMs: number;
  /** Postgres cancels a statement running longer (`statement_timeout`). */
  statementTimeoutMs: number;
  /** Postgres cancels a statement waiting longer for a lock (`lock_timeout`). */
  lockTimeoutMs: number;
  /** Postgres ends a session left idle inside a transaction longer (its locks go with it). */
  idleInTransactionTimeoutMs: number;
  /** Idle this long, a connection is probed (TCP keepalive); ten unanswered probes a second apart end it. */
  keepAliveIdleMs: number;
}

/**
 * How much longer than the statement timeout the client waits for an answer. Postgres's own timeout
 * normally answers first, with a clear error; this wait ends only when nothing comes back at all (a
 * network that drops packets), and then the connection is closed rather than reused.
 */
export const answerGraceMs = 5_000;

export const applicationName = (role: DatabaseRole): string => `webhook-operator-${role}`;

/**
 * pg's options for a connection of `role`. Without `timeouts` (tools, tests) only the name is set. The
 * server-side timeouts go in the start-up message, so they hold from the first statement on; none of
 * them ends an idle session outside a transaction, so a LISTEN connection lives as long as its socket.
 */
export function connectionOptions(
  connectionString: string,
  role: DatabaseRole,
  timeouts?: DatabaseTimeouts,
): pg.ClientConfig {
  const named = { connectionString, application_name: applicationName(role) };
  if (!timeouts) return named;
  return {
    ...named,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: timeouts.keepAliveIdleMs,
    statement_timeout: timeouts.statementTimeoutMs,
    lock_timeout: timeouts.lockTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    query_timeout: timeouts.statementTimeoutMs + answerGraceMs,
  };
}
