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
