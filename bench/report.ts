import { memoryTargets, type ServiceMemory } from "./memory.js";
import type { PgTimePerEvent } from "./pg-time.js";
import { describeLatencySplit, formatMs, formatRatio, formatTable, type ScenarioResult } from "./stats.js";

/** Runs of one scenario across rounds; the fastest one is reported (least disturbed by the machine). */
export class ScenarioRuns {
  private readonly byKey = new Map<string, ScenarioResult[]>();

  add(key: string, result: ScenarioResult): void {
    this.byKey.set(key, [...(this.byKey.get(key) ?? []), result]);
  }

  best(key: string): ScenarioResult {
    const runs = this.byKey.get(key) ?? [];
    const best = runs.reduce<ScenarioResult | undefined>(
      (a, b) => (a && a.deliveriesPerSecond >= b.deliveriesPerSecond ? a : b),
      undefined,
    );
    if (!best) throw new Error(`no result for ${key}`);
    return { ...best, perRound: runs.map((r) => r.deliveriesPerSecond) };
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }
}

/**
 * One scenario's deliveries/s over another's, round by round: each round runs them back to back, so a
 * round's ratio sets them side by side in the same moment of the machine, which the best rounds of
 * two scenarios need not be.
 */
function roundByRound(a: ScenarioResult, b: ScenarioResult): string {
  const bRounds = b.perRound ?? [];
  return (a.perRound ?? []).map((rate, i) => formatRatio(rate / (bRounds[i] ?? Number.NaN))).join(" / ");
}

export function printProgress(round: number | null, result: ScenarioResult): void {
  const prefix = round === null ? "" : `round ${round}  `;
  console.log(
    `  ${prefix}${result.name}: ${result.deliveriesPerSecond.toFixed(0)} deliveries/s, p50 ${formatMs(result.p50Ms)} ms, p99 ${formatMs(result.p99Ms)} ms`,
  );
}

export function printSummary(
  runs: ScenarioRuns,
  pacedRate: number,
  pgTimes: Map<string, PgTimePerEvent>,
  memory: ServiceMemory | undefined,
  /** Postgres CPU per event of the paced scenarios' emits alone, by scenario key (bench/emit-only.ts). */
  emitOnly: Map<string, number>,
): void {
  const best = (key: string) => runs.best(key);
  const results = runs.keys().map(best);
  console.log("");
  console.log("How each scenario ran");
  for (const result of results) {
    console.log(`  ${result.name}`);
    for (const note of result.notes) console.log(`      ${note}`);
  }
  console.log("");
  console.log("Results (best round per scenario; latency = event emitted → receiver got it)");
  console.log(formatTable(results));
  console.log(
    "  Throughput rows emit everything up front, so their latencies include queueing behind the backlog;",
  );
  console.log("  the paced rows are the latency measurement.");
  console.log("");
  console.log("Ratios (computed from this run) and targets");
  const targets: Array<[string, boolean]> = [];
  for (const fanOut of [1, 100]) {
    if (!runs.has(`engine${fanOut}`) || !runs.has("limit")) continue;
    const engine = best(`engine${fanOut}`).deliveriesPerSecond;
    const ofLimit = engine / best("limit").deliveriesPerSecond;
    const ofBaseline = runs.has(`baseline${fanOut}`)
      ? engine / best(`baseline${fanOut}`).deliveriesPerSecond
      : undefined;
    console.log(
      `  fan-out ${fanOut}: engine/limit ${formatRatio(ofLimit)}${ofBaseline === undefined ? "" : `, engine/baseline ${ofBaseline.toFixed(2)}×`}`,
    );
    console.log(`    engine/limit round by round: ${roundByRound(best(`engine${fanOut}`), best("limit"))}`);
    // On cores that every process shares, throughput follows the CPU a delivery costs in all of them.
    const limitCpu = best("limit").cpu;
    const engineCpu = best(`engine${fanOut}`).cpu;
    if (limitCpu && engineCpu) {
      console.log(
        `    CPU per delivery: limit ${limitCpu.total.toFixed(0)} µs, engine ${engineCpu.total.toFixed(0)} µs (of which Postgres ${engineCpu.postgres.toFixed(0)}): engine/limit would be ${formatRatio(limitCpu.total / engineCpu.total)} if both kept the cores equally busy`,
      );
    }
    targets.push([`fan-out ${fanOut}: engine ≥ 50% of the limit (${formatRatio(ofLimit)})`, ofLimit >= 0.5]);
    if (ofBaseline !== undefined) {
      targets.push([
        `fan-out ${fanOut}: engine ≥ 3× the baseline (${ofBaseline.toFixed(2)}×)`,
        ofBaseline >= 3,
      ]);
    }
  }
  // What order per rollout and pace cost a burst: each against the same burst without it, in this run.
  for (const [key, plain, what] of [
    ["engine1Ordered", "engine1", "order per rollout (fan-out 1, rollouts of 3 events)"],
    [
      "engine100Limited",
      "engine100",
      "pace (fan-out 100, every webhook rate-limited, the limit not reached)",
    ],
  ] as const) {
    if (!runs.has(key) || !runs.has(plain)) continue;
    const [withIt, without] = [best(key), best(plain)];
    const cpu =
      withIt.cpu && without.cpu
        ? `; CPU per delivery ${withIt.cpu.total.toFixed(0)} µs against ${without.cpu.total.toFixed(0)} (Postgres ${withIt.cpu.postgres.toFixed(0)} against ${without.cpu.postgres.toFixed(0)})`
        : "";
    console.log(
      `  ${what}: ${formatRatio(withIt.deliveriesPerSecond / without.deliveriesPerSecond)} of the deliveries/s without it (round by round ${roundByRound(withIt, without)})${cpu}`,
    );
  }
  if (memory) {
    console.log(
      `  service process: idle RSS ${memory.idleRssMiB.toFixed(0)} MiB; peak RSS ${memory.peakRssMiB.toFixed(0)} MiB and peak heap ${memory.peakHeapMiB.toFixed(0)} MiB draining the burst; idle again ${memory.idleAfterRssMiB.toFixed(0)} MiB`,
    );
    targets.push(...memoryTargets(memory));
  }
  // The bursts' Postgres CPU per event (fan-out 1: one delivery per event), which moderate rates are held
  // to: the burst of events each in its own transaction, as the paced events are, and the batched one.
  const bursts = (["engine1Single", "engine1"] as const)
    .map((key) => ({ key, postgres: runs.has(key) ? best(key).cpu?.postgres : undefined }))
    .filter(
      (burst): burst is { key: "engine1Single" | "engine1"; postgres: number } =>
        burst.postgres !== undefined,
    );
  const burstLabel = { engine1Single: "one event per transaction", engine1: "500 events per transaction" };
  const burstPostgres = bursts[0]?.postgres;
  for (const [key, rate, bound] of [
    ["enginePaced200", 200, 10],
    ["enginePaced", pacedRate, 15],
  ] as const) {
    if (!runs.has(key)) continue;
    const { p50Ms, p99Ms: p99, cpu, split } = best(key);
    if (split) console.log(`  ${rate} events/s: ${describeLatencySplit(split)}`);
    targets.push([
      `engine p99 < ${bound} ms at a steady ${rate} events/s (p99 ${formatMs(p99)} ms)`,
      p99 < bound,
    ]);
    targets.push([
      `engine p99 < 3× p50 at a steady ${rate} events/s (p50 ${formatMs(p50Ms)} ms, p99 ${formatMs(p99)} ms: ${(p99 / p50Ms).toFixed(1)}×)`,
      p99 < 3 * p50Ms,
    ]);
    if (cpu && burstPostgres) {
      const emits = emitOnly.get(key);
      if (emits !== undefined) {
        const engine = cpu.postgres - emits;
        console.log(
          `  ${rate} events/s: Postgres CPU ${cpu.postgres.toFixed(0)} µs per event, of which the emit transactions alone (no engine running) ${emits.toFixed(0)} µs; the engine's ${engine.toFixed(0)} µs is ${(engine / burstPostgres).toFixed(1)}× the burst's whole ${burstPostgres.toFixed(0)} µs (${burstLabel[bursts[0]?.key ?? "engine1"]})`,
        );
      }
      for (const burst of bursts) {
        const ratio = cpu.postgres / burst.postgres;
        targets.push([
          `Postgres CPU per event at ${rate} events/s ≤ 1.5× the burst's, ${burstLabel[burst.key]} (${cpu.postgres.toFixed(0)} µs against ${burst.postgres.toFixed(0)} µs: ${ratio.toFixed(2)}×)`,
          ratio <= 1.5,
        ]);
      }
    }
    const pg = pgTimes.get(key);
    if (pg) {
      console.log(
        `  ${rate} events/s: Postgres ${pg.totalUs.toFixed(0)} µs per event, ${(pg.planningShare * 100).toFixed(0)}% of it planning`,
      );
      targets.push([
        `planning < 15% of Postgres time at ${rate} events/s (${(pg.planningShare * 100).toFixed(0)}%)`,
        pg.planningShare < 0.15,
      ]);
    }
  }
  for (const [label, met] of targets) console.log(`  ${met ? "PASS" : "MISS"}  ${label}`);
}
