// CPU time of chosen processes, from /proc (Linux only): the Postgres server this benchmark started
// (its postmaster and every backend, found as descendants of this process, so that other Postgres
// servers on a shared machine are not counted) and the service processes it runs.
import { readdirSync, readFileSync } from "node:fs";

interface ProcessStat {
  pid: number;
  parent: number;
  comm: string;
  cpuMs: number;
}

// Clock ticks per second of /proc/<pid>/stat's times (USER_HZ): 100 on every Linux Node runs on.
const ticksToMs = 10;

function readStat(pid: number): ProcessStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces; the fields after it are numbered from 3.
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    return {
      pid,
      parent: Number(fields[1]),
      comm: text.slice(text.indexOf("(") + 1, close),
      cpuMs: (Number(fields[11]) + Number(fields[12])) * ticksToMs,
    };
  } catch {
    return null; // gone meanwhile
  }
}

function allProcesses(): ProcessStat[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((found): found is ProcessStat => found !== null);
}

/** CPU ms used so far by each `postgres` process below this one (the embedded server and its backends). */
export type PostgresCpu = Map<number, number>;

/** null when there is none (BENCH_DATABASE_URL's server is not ours to measure) or no /proc. */
export function samplePostgresCpu(): PostgresCpu | null {
  let processes: ProcessStat[];
  try {
    processes = allProcesses();
  } catch {
    return null;
  }
  const below = new Set([process.pid]);
  const postgres: PostgresCpu = new Map();
  // Parents come before children in no particular order: repeat until no new descendant is found.
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of processes) {
      if (below.has(entry.pid) || !below.has(entry.parent)) continue;
      below.add(entry.pid);
      grew = true;
      if (entry.comm === "postgres") postgres.set(entry.pid, entry.cpuMs);
    }
  }
  return postgres.size > 0 ? postgres : null;
}

/**
 * CPU ms the Postgres processes used between two samples. A backend that started in between counts
 * whole; one that exited in between loses what it used since `before` (the scenarios keep their
 * connections open, so that is rare and small).
 */
export function postgresCpuBetween(before: PostgresCpu | null, after: PostgresCpu | null): number | null {
  if (!before || !after) return null;
  let total = 0;
  for (const [pid, cpuMs] of after) total += cpuMs - (before.get(pid) ?? 0);
  return total;
}

/** CPU ms used so far by the given processes. */
export function processesCpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.cpuMs ?? 0), 0);
}
