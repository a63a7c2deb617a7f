// Where a scenario's CPU went, by process: this one (the engine or the bare loop, and the emitter),
// Postgres and the receiver. Read from /proc, so Linux only; elsewhere nothing is measured. On 2 shared
// cores, throughput follows the CPU a delivery costs in all of them, which is what this explains.
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";

/** CPU time used so far, in ms, by process group. */
export interface CpuSample {
  bench: number;
  postgres: number;
  /** Of `postgres`: the background processes (walwriter, checkpointer, autovacuum, …), not backends. */
  postgresBackground: number;
  receiver: number;
  /** Each backend's (connection's) CPU time so far, by pid. */
  backends: Map<number, number>;
}

/** µs of CPU per delivery, by process group. */
export interface CpuPerDelivery extends Omit<CpuSample, "backends"> {
  total: number;
}

// Clock ticks per second of /proc/<pid>/stat's times (USER_HZ): 100 on every Linux Node runs on.
const ticksToMs = 10;

interface ProcStat {
  comm: string;
  ppid: number;
  /** Its own CPU time. */
  cpuMs: number;
  /** The CPU time of its children that ended and were waited for. */
  reapedChildrenMs: number;
}

function stat(pid: string | number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces; the fields after it are numbered from 3.
    const close = text.lastIndexOf(")");
    const fields = text
      .slice(close + 2)
      .split(" ")
      .map(Number);
    const [ppid, utime, stime, cutime, cstime] = [1, 11, 12, 13, 14].map((i) => fields[i] ?? 0);
    return {
      comm: text.slice(text.indexOf("(") + 1, close),
      ppid: ppid as number,
      cpuMs: ((utime as number) + (stime as number)) * ticksToMs,
      reapedChildrenMs: ((cutime as number) + (cstime as number)) * ticksToMs,
    };
  } catch {
    return null; // gone meanwhile, or no /proc
  }
}

/** Postgres names its backends "postgres: user db host …" and the rest by role ("postgres: walwriter"). */
const isBackend = (pid: string) => {
  try {
    return /^postgres: \S+ \S+ \S+/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " "));
  } catch {
    return false;
  }
};

/**
 * The postmaster serving `db`, when it runs on this machine: the parent of this connection's backend.
 * Its processes are the ones counted, not every postgres on the machine (other work runs its own).
 */
export async function postmasterOf(db: pg.Pool): Promise<number | undefined> {
  const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const backend = rows[0] ? stat(rows[0].pid) : null;
  return backend && stat(backend.ppid)?.comm === "postgres" ? backend.ppid : undefined;
}

/**
 * CPU used so far. Postgres is the postmaster and all its processes, those that ended meanwhile too
 * (counted in the postmaster's reaped children's time); without a known postmaster, every process
 * named postgres.
 */
export function cpuSample(receiverPid: number | undefined, postmasterPid?: number): CpuSample | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const postmaster = postmasterPid === undefined ? null : stat(postmasterPid);
  let postgres = postmaster ? postmaster.cpuMs + postmaster.reapedChildrenMs : 0;
  let postgresBackground = 0;
  const backends = new Map<number, number>();
  for (const pid of pids) {
    const found = stat(pid);
    if (found?.comm !== "postgres") continue;
    if (postmaster && found.ppid !== postmasterPid) continue;
    postgres += found.cpuMs;
    if (isBackend(pid)) backends.set(Number(pid), found.cpuMs);
    else postgresBackground += found.cpuMs;
  }
  const { user, system } = process.cpuUsage();
  const receiver = receiverPid === undefined ? null : stat(receiverPid);
  return {
    bench: (user + system) / 1000,
    postgres,
    postgresBackground,
    receiver: receiver?.cpuMs ?? 0,
    backends,
  };
}

export function cpuPerDelivery(
  before: CpuSample | null,
  after: CpuSample | null,
  deliveries: number,
): CpuPerDelivery | undefined {
  if (!before || !after) return undefined;
  const us = (key: Exclude<keyof CpuSample, "backends">) => ((after[key] - before[key]) * 1000) / deliveries;
  const perDelivery = {
    bench: us("bench"),
    postgres: us("postgres"),
    postgresBackground: us("postgresBackground"),
    receiver: us("receiver"),
  };
  return { ...perDelivery, total: perDelivery.bench + perDelivery.postgres + perDelivery.receiver };
}

/**
 * What a connection of the engine's scenarios does, by its name and the last statement it ran: the
 * worker's record connection runs only the record; its other one the claims (and releases, pauses and
 * due retries); the benchmark's emitting connections end each transaction with COMMIT.
 */
function connectionKind(applicationName: string, query: string): string {
  if (applicationName === "webhook-operator-engine")
    return query.startsWith("-- record-outcomes.sql") ? "the record's" : "the claim's";
  return /^(COMMIT|BEGIN|-- emit-events\.sql)/.test(query) ? "the emits'" : "the rest (API, checks)";
}

/**
 * Postgres's CPU between two samples, connection by connection, as the note "Postgres CPU by
 * connection, µs a delivery: the emits' 15.5, the claim's 21.0, …": the total cannot tell the record
 * from the claim from the emit, which run on connections of their own. Connections are told apart by
 * pg_stat_activity (connectionKind) once the scenario is over; background processes are not included.
 */
export async function postgresCpuByConnection(
  db: pg.Pool,
  before: CpuSample | null,
  after: CpuSample | null,
  deliveries: number,
): Promise<string | undefined> {
  if (!before || !after || after.backends.size === 0) return undefined;
  const { rows } = await db.query<{ pid: number; application_name: string; query: string }>(
    "SELECT pid, application_name, query FROM pg_stat_activity WHERE datname = current_database()",
  );
  const kinds = new Map(rows.map((row) => [row.pid, connectionKind(row.application_name, row.query)]));
  const byKind = new Map<string, number>();
  for (const [pid, cpuMs] of after.backends) {
    const kind = kinds.get(pid) ?? "the rest (API, checks)";
    byKind.set(kind, (byKind.get(kind) ?? 0) + cpuMs - (before.backends.get(pid) ?? 0));
  }
  // Not the engine (the pg-boss baseline): none of its connections is the worker's.
  if (!byKind.has("the claim's") && !byKind.has("the record's")) return undefined;
  const order = ["the emits'", "the claim's", "the record's", "the rest (API, checks)"];
  const parts = order
    .filter((kind) => byKind.has(kind))
    .map((kind) => `${kind} ${(((byKind.get(kind) as number) * 1000) / deliveries).toFixed(1)}`);
  return `Postgres CPU by connection, µs a delivery: ${parts.join(", ")}`;
}

export const formatCpu = (cpu: CpuPerDelivery): string =>
  `CPU per delivery: ${cpu.total.toFixed(0)} µs (this process ${cpu.bench.toFixed(0)}, Postgres ${cpu.postgres.toFixed(0)} of which background processes ${cpu.postgresBackground.toFixed(0)}, receiver ${cpu.receiver.toFixed(0)})`;
