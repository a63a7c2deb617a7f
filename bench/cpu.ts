// Where a scenario's CPU went, by process: this one (the engine or the bare loop, and the emitter),
// Postgres (every process named postgres on the machine) and the receiver. Read from /proc, so Linux
// only; elsewhere nothing is measured. On 2 shared cores, throughput follows the CPU a delivery costs
// in all of them, which is what this explains.
import { readdirSync, readFileSync } from "node:fs";

/** CPU time used so far, in ms, by process group. */
export interface CpuSample {
  bench: number;
  postgres: number;
  receiver: number;
}

/** µs of CPU per delivery, by process group. */
export interface CpuPerDelivery extends CpuSample {
  total: number;
}

// Clock ticks per second of /proc/<pid>/stat's times (USER_HZ): 100 on every Linux Node runs on.
const ticksToMs = 10;

function stat(pid: string): { comm: string; cpuMs: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces; the fields after it are numbered from 3.
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    const userTicks = Number(fields[11]);
    const systemTicks = Number(fields[12]);
    return { comm: text.slice(text.indexOf("(") + 1, close), cpuMs: (userTicks + systemTicks) * ticksToMs };
  } catch {
    return null; // gone meanwhile, or no /proc
  }
}

export function cpuSample(receiverPid: number | undefined): CpuSample | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let postgres = 0;
  for (const pid of pids) {
    const found = stat(pid);
    if (found?.comm === "postgres") postgres += found.cpuMs;
  }
  const { user, system } = process.cpuUsage();
  const receiver = receiverPid === undefined ? null : stat(String(receiverPid));
  return { bench: (user + system) / 1000, postgres, receiver: receiver?.cpuMs ?? 0 };
}

export function cpuPerDelivery(
  before: CpuSample | null,
  after: CpuSample | null,
  deliveries: number,
): CpuPerDelivery | undefined {
  if (!before || !after) return undefined;
  const us = (key: keyof CpuSample) => ((after[key] - before[key]) * 1000) / deliveries;
  const perDelivery = { bench: us("bench"), postgres: us("postgres"), receiver: us("receiver") };
  return { ...perDelivery, total: perDelivery.bench + perDelivery.postgres + perDelivery.receiver };
}

export const formatCpu = (cpu: CpuPerDelivery): string =>
  `CPU per delivery: ${cpu.total.toFixed(0)} µs (this process ${cpu.bench.toFixed(0)}, Postgres ${cpu.postgres.toFixed(0)}, receiver ${cpu.receiver.toFixed(0)})`;
