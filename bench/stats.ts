import { type CpuPerDelivery, formatCpu } from "./cpu.js";
import type { Arrivals } from "./receiver-process.js";

/** What one scenario measured. */
export interface ScenarioResult {
  name: string;
  deliveries: number;
  elapsedMs: number;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Free text printed under the scenario (how it was emitted, settings). */
  notes: string[];
  /** Where its CPU went (Linux only). */
  cpu?: CpuPerDelivery;
  /** deliveries/s of every round, when the scenario ran in several. */
  perRound?: number[];
  /** The paced scenarios: where their latency goes. */
  split?: LatencySplit;
}

/** The middle value, or the mean of the two middle values of an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

/**
 * Latency of every arrival: receiver arrival time minus the time its event was emitted (by event id).
 * Throws if an arrival has no known emit time, or if the count differs from what was expected.
 */
export function latencies(arrivals: Arrivals, emittedAt: Map<string, number>, expected: number): number[] {
  if (arrivals.unparsable > 0) throw new Error(`receiver got ${arrivals.unparsable} bodies without an id`);
  if (arrivals.ids.length !== expected) {
    throw new Error(`receiver got ${arrivals.ids.length} requests, expected ${expected}`);
  }
  const values = arrivals.ids.map((id, i) => {
    const emitted = emittedAt.get(id);
    if (emitted === undefined) throw new Error(`receiver got an unknown event id ${id}`);
    return (arrivals.times[i] as number) - emitted;
  });
  return values.sort((a, b) => a - b);
}

/**
 * Where the paced scenarios' latency goes, arrival by arrival: the caller's transaction (the emit began
 * → its COMMIT returned: the emit statement and the commit's WAL flush, which the caller waits for
 * whatever the engine does) and what follows the commit (hand-over or wake-up, the send, the receiver
 * reading it), each as p50 and p99; and of the slowest 1% of arrivals, how many spent most of their time
 * in the transaction.
 */
export interface LatencySplit {
  transaction: { p50Ms: number; p99Ms: number };
  afterCommit: { p50Ms: number; p99Ms: number };
  slowest: number;
  slowestMostlyInTransaction: number;
}

export function latencySplit(
  arrivals: Arrivals,
  emitted: Map<string, { emittedAt: number; committedAt: number }>,
): LatencySplit {
  const parts = arrivals.ids.map((id, i) => {
    const record = emitted.get(id);
    if (!record) throw new Error(`receiver got an unknown event id ${id}`);
    const transaction = record.committedAt - record.emittedAt;
    return { transaction, afterCommit: (arrivals.times[i] as number) - record.committedAt };
  });
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const transactions = sorted(parts.map((part) => part.transaction));
  const afterCommits = sorted(parts.map((part) => part.afterCommit));
  const totals = sorted(parts.map((part) => part.transaction + part.afterCommit));
  const p99 = percentile(totals, 99);
  const slowest = parts.filter((part) => part.transaction + part.afterCommit >= p99);
  return {
    transaction: { p50Ms: percentile(transactions, 50), p99Ms: percentile(transactions, 99) },
    afterCommit: { p50Ms: percentile(afterCommits, 50), p99Ms: percentile(afterCommits, 99) },
    slowest: slowest.length,
    slowestMostlyInTransaction: slowest.filter((part) => part.transaction > part.afterCommit).length,
  };
}

export function describeLatencySplit(split: LatencySplit): string {
  const pair = ({ p50Ms, p99Ms }: { p50Ms: number; p99Ms: number }) =>
    `p50 ${formatMs(p50Ms)} / p99 ${formatMs(p99Ms)} ms`;
  return `latency split: the caller's transaction (emit → its commit returned) ${pair(split.transaction)}; commit → arrival (hand-over or wake-up, send, receiver) ${pair(split.afterCommit)}; of the slowest 1% (${split.slowest}), ${split.slowestMostlyInTransaction} spent most of it in the caller's transaction`;
}

export function summarize(
  name: string,
  deliveries: number,
  elapsedMs: number,
  sortedLatencies: number[],
  notes: string[],
  cpu?: CpuPerDelivery,
): ScenarioResult {
  return {
    name,
    deliveries,
    elapsedMs,
    deliveriesPerSecond: deliveries / (elapsedMs / 1000),
    p50Ms: percentile(sortedLatencies, 50),
    p99Ms: percentile(sortedLatencies, 99),
    notes: cpu ? [...notes, formatCpu(cpu)] : notes,
    cpu,
  };
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

/** A latency: tenths of a millisecond below 100 ms (bench/clock.ts), whole ones above. */
export const formatMs = (value: number): string => fixed(value, value < 100 ? 1 : 0);

export function formatTable(results: ScenarioResult[]): string {
  const header = [
    "scenario",
    "deliveries",
    "seconds",
    "deliveries/s",
    "p50 ms",
    "p99 ms",
    "deliveries/s per round",
  ];
  const rows = results.map((r) => [
    r.name,
    String(r.deliveries),
    fixed(r.elapsedMs / 1000, 2),
    fixed(r.deliveriesPerSecond),
    formatMs(r.p50Ms),
    formatMs(r.p99Ms),
    (r.perRound ?? [r.deliveriesPerSecond]).map((v) => fixed(v)).join(" / "),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const width = widths[i] as number;
        return i === 0 || i === cells.length - 1 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function formatRatio(value: number): string {
  return `${fixed(value * 100, 1)}%`;
}
