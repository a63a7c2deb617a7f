import type pg from "pg";

/** Postgres time spent on one kind of statement during a scenario (from pg_stat_statements). */
export interface StatementTime {
  name: string;
  calls: number;
  execMs: number;
  planMs: number;
}

// The system's statements by what they do; the benchmark's own (completion checks, these queries) are
// left out. Transaction control is counted: the emit's COMMIT is where its WAL is flushed.
// pg_stat_statements keeps a statement from its first keyword, without the line naming the engine's
// files (src/db/sql-statement.ts): they are told apart by how they begin.
const kinds: Array<[string, RegExp]> = [
  ["emit (event + deliveries)", /^WITH given AS/],
  ["record (outcomes + follow-ups)", /^WITH outcomes AS MATERIALIZED/],
  ["claim", /^WITH RECURSIVE unfinished_webhooks/],
  ["BEGIN / COMMIT", /^\s*(BEGIN|COMMIT)\b/i],
];
const benchmarkOwn =
  /pg_stat_statements|delivered_at IS NULL\) AS finished|FILTER \(WHERE success AND status_code/;

/** Clears the statistics of `db`'s database; false when pg_stat_statements is not available. */
export async function resetStatementTimes(db: pg.Pool): Promise<boolean> {
  try {
    await db.query("SELECT pg_stat_statements_reset()");
    return true;
  } catch {
    return false;
  }
}

/** Time per kind of statement since the last reset, in this database. */
export async function statementTimes(db: pg.Pool): Promise<StatementTime[]> {
  const { rows } = await db.query<{ query: string; calls: string; exec: number; plan: number }>(
    `SELECT query, calls, total_exec_time AS exec, total_plan_time AS plan FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const byKind = new Map<string, StatementTime>();
  for (const row of rows) {
    if (benchmarkOwn.test(row.query)) continue;
    const name = kinds.find(([, pattern]) => pattern.test(row.query))?.[0] ?? "other";
    const time = byKind.get(name) ?? { name, calls: 0, execMs: 0, planMs: 0 };
    time.calls += Number(row.calls);
    time.execMs += row.exec;
    time.planMs += row.plan;
    byKind.set(name, time);
  }
  return [...byKind.values()].sort((a, b) => b.execMs + b.planMs - (a.execMs + a.planMs));
}

/** The lines printed under a paced scenario: µs per delivered event, by kind and in total. */
export function formatStatementTimes(times: StatementTime[], events: number): string[] {
  const us = (ms: number) => ((ms * 1000) / events).toFixed(0);
  const exec = times.reduce((sum, t) => sum + t.execMs, 0);
  const plan = times.reduce((sum, t) => sum + t.planMs, 0);
  return [
    `Postgres time per event: ${us(exec + plan)} µs (execution ${us(exec)}, planning ${us(plan)}: ${((plan / (exec + plan)) * 100).toFixed(0)}% planning)`,
    ...times.map(
      (t) =>
        `  ${t.name}: ${(t.calls / events).toFixed(2)} calls, ${us(t.execMs)} µs execution + ${us(t.planMs)} µs planning per event`,
    ),
  ];
}

export interface PgTimePerEvent {
  totalUs: number;
  planningShare: number;
}

export function perEvent(times: StatementTime[], events: number): PgTimePerEvent {
  const exec = times.reduce((sum, t) => sum + t.execMs, 0);
  const plan = times.reduce((sum, t) => sum + t.planMs, 0);
  return { totalUs: ((exec + plan) * 1000) / events, planningShare: plan / (exec + plan) };
}

/** What the whole server wrote so far: transactions that wrote (each one a commit) and WAL bytes. */
export interface ServerWrites {
  writeTransactions: number;
  walBytes: number;
}

/**
 * Read from the transaction id counter and the WAL position, exact at any moment (pg_stat_database's
 * counters lag by up to a second per backend). Server-wide: the benchmark's server runs nothing else.
 */
export async function serverWrites(db: pg.Pool): Promise<ServerWrites> {
  const { rows } = await db.query<{ xid: string; lsn: string }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`,
  );
  return { writeTransactions: Number(rows[0]?.xid), walBytes: Number(rows[0]?.lsn) };
}

export const formatServerWrites = (before: ServerWrites, after: ServerWrites, events: number): string =>
  `Postgres writes per event: ${((after.writeTransactions - before.writeTransactions) / events).toFixed(2)} transactions (commits), ${((after.walBytes - before.walBytes) / events).toFixed(0)} bytes of WAL`;
