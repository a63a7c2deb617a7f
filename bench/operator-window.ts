// What the benchmark's process (the operator and the driver) did during a timed window — CPU, event
// loop, reconciles from the service's own metrics — and the tables the benchmark prints.
import { performance } from "node:perf_hooks";
import { metrics } from "../src/metrics.js";

/** What this process (operator + benchmark driver) did during a window: CPU, event loop, reconciles. */
export interface ProcessWindow {
  cpuShare: number;
  elu: number;
  reconciles: Map<string, { count: number; meanMs: number; errors: number }>;
}

async function reconcileTotals(): Promise<Map<string, { count: number; sum: number; errors: number }>> {
  const totals = new Map<string, { count: number; sum: number; errors: number }>();
  const entry = (controller: string) => {
    const found = totals.get(controller) ?? { count: 0, sum: 0, errors: 0 };
    totals.set(controller, found);
    return found;
  };
  for (const value of (await metrics.reconcileDuration.get()).values) {
    if (value.metricName?.endsWith("_count")) entry(String(value.labels.controller)).count = value.value;
    if (value.metricName?.endsWith("_sum")) entry(String(value.labels.controller)).sum = value.value;
  }
  for (const value of (await metrics.reconciles.get()).values)
    if (value.labels.result === "error") entry(String(value.labels.controller)).errors += value.value;
  return totals;
}

export async function measureWindow(): Promise<() => Promise<ProcessWindow>> {
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  const before = await reconcileTotals();
  return async () => {
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const reconciles = new Map<string, { count: number; meanMs: number; errors: number }>();
    for (const [controller, end] of await reconcileTotals()) {
      const start = before.get(controller) ?? { count: 0, sum: 0, errors: 0 };
      const count = end.count - start.count;
      if (count > 0)
        reconciles.set(controller, {
          count,
          meanMs: ((end.sum - start.sum) / count) * 1000,
          errors: end.errors - start.errors,
        });
    }
    return {
      cpuShare: (used.user + used.system) / 1000 / elapsedMs,
      elu: performance.eventLoopUtilization(elu).utilization,
      reconciles,
    };
  };
}

export function describeWindow(window: ProcessWindow): string[] {
  const lines = [
    `this process (operator + driver): CPU ${(window.cpuShare * 100).toFixed(0)}% of one core, event-loop utilization ${(window.elu * 100).toFixed(0)}%`,
  ];
  for (const [controller, stats] of window.reconciles)
    lines.push(
      `${controller} reconciles: ${stats.count} (mean ${stats.meanMs.toFixed(1)} ms${stats.errors ? `, ${stats.errors} failed and requeued` : ""})`,
    );
  return lines;
}

/** Renders rows as an aligned text table: first column left-aligned, the others right-aligned. */
export function formatRows(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
