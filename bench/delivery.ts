// Delivery benchmark: the physical limit (bare undici), this engine end to end, and a pg-boss + axios
// baseline, in one run, on this machine, against the same loopback receiver (a child process).
// Run: npx tsx bench/delivery.ts
// Env: BENCH_SCALE (default 1: 20k deliveries per throughput scenario, 10 s paced), BENCH_ROUNDS (3),
// BENCH_DATABASE_URL (else an embedded Postgres), BENCH_CONCURRENCY (128), BENCH_POOL_SIZE (10),
// BENCH_BOSS_BATCH (16), BENCH_ONLY (a comma-separated list of scenario keys, e.g.
// "engine1,enginePaced200,enginePaced": only those run, with the targets they decide). Exits 0 whether or not the targets are met; non-zero when something crashed.
import { cpus } from "node:os";
import { type BaselineSettings, startBaselineSystem } from "./baseline-system.js";
import { type BenchDatabase, type BenchServer, startBenchServer } from "./database.js";
import { type DeliverySystem, runPaced, runThroughput } from "./driver.js";
import { emitOnlyPostgresUs } from "./emit-only.js";
import { type EngineSettings, emitterConnections, startEngineSystem } from "./engine-system.js";
import { formatLoad, runBench } from "./entry.js";
import { runLimit } from "./limit.js";
import { describeMemory, measureServiceMemory } from "./memory.js";
import {
  formatServerWrites,
  formatStatementTimes,
  type PgTimePerEvent,
  perEvent,
  resetStatementTimes,
  type ServerWrites,
  serverWrites,
  statementTimes,
} from "./pg-time.js";
import { type ReceiverProcess, startReceiverProcess } from "./receiver-process.js";
import { printProgress, printSummary, ScenarioRuns } from "./report.js";
import type { ScenarioResult } from "./stats.js";

const numberFromEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

const scale = numberFromEnv("BENCH_SCALE", 1);
const rounds = Math.round(numberFromEnv("BENCH_ROUNDS", 3));
const concurrency = numberFromEnv("BENCH_CONCURRENCY", 128);
const poolSize = numberFromEnv("BENCH_POOL_SIZE", 10);
const bossBatch = numberFromEnv("BENCH_BOSS_BATCH", 16);
const deliveries = Math.max(1_000, Math.round(20_000 * scale));
const pacedSeconds = Math.max(2, 10 * scale);
const pacedRate = 500;
/** Deliveries written per emit transaction in the throughput scenarios (500 events at fan-out 1). */
const deliveriesPerTransaction = 500;
const only = process.env.BENCH_ONLY?.split(",").map((key) => key.trim());
const selected = (key: string) => !only || only.includes(key);

const engineSettings: EngineSettings = {
  DELIVERY_CONCURRENCY: String(concurrency),
  // One webhook must be able to use every slot in the fan-out 1 scenario (the default caps it at 16).
  DELIVERY_PER_WEBHOOK_CONCURRENCY: String(concurrency),
  DATABASE_POOL_SIZE: String(poolSize),
};
const baselineSettings: BaselineSettings = {
  batchSize: bossBatch,
  workers: Math.max(1, Math.round(concurrency / bossBatch)),
  poolSize,
};
const engineNote = `engine: ${Object.entries(engineSettings)
  .map(([name, value]) => `${name}=${value}`)
  .join(" ")}, woken by the emit's NOTIFY`;
const baselineNote = `pg-boss: batchSize ${baselineSettings.batchSize} × localConcurrency ${baselineSettings.workers}, pool ${poolSize}, LISTEN/NOTIFY queue, burstWhenBatchFull; axios keep-alive; one UPDATE per batch`;

type Starter = (database: BenchDatabase, receiverUrl: string, fanOut: number) => Promise<DeliverySystem>;
const startEngine: Starter = (database, url, fanOut) =>
  startEngineSystem(database, url, fanOut, engineSettings);
/** The most a webhook's rate limit may be (migration 020): paced, but never held back by it here. */
const unreachedRateLimit = 10_000;
/** The engine with every webhook rate-limited (the claim then takes tokens from each one's pace row). */
const startEngineLimited: Starter = async (database, url, fanOut) => {
  const system = await startEngine(database, url, fanOut);
  await system.observer.query(
    "UPDATE webhooks SET rate_limit_per_second = $2, rate_limit_burst = $3 WHERE project_id = $1",
    [system.project.id, unreachedRateLimit, unreachedRateLimit],
  );
  return system;
};
const startBaseline: Starter = (database, url, fanOut) =>
  startBaselineSystem(database, url, fanOut, baselineSettings);

/** A fresh database, the system started on it, the scenario run, everything torn down. */
async function withSystem(
  server: BenchServer,
  receiver: ReceiverProcess,
  fanOut: number,
  start: Starter,
  run: (system: DeliverySystem) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const database = await server.freshDatabase(`fanout_${fanOut}`);
  try {
    const system = await start(database, receiver.url, fanOut);
    try {
      return await run(system);
    } finally {
      await system.close();
    }
  } finally {
    await database.drop();
  }
}

/**
 * The throughput scenarios of one round, engine and baseline interleaved so they share the machine's
 * mood. Every system is warmed up with as many deliveries as it then delivers, the bare loop too: a
 * warm-up of a twentieth (as before) left the engine's first round with code V8 had not optimised yet
 * (measured alone: 40% of the bare loop after 1,000 events, 49% after 20,000).
 */
function throughputScenarios(server: BenchServer, receiver: ReceiverProcess) {
  const throughput =
    (start: Starter, fanOut: number, name: string, note: string, rolloutEvents?: number) => () =>
      withSystem(server, receiver, fanOut, start, (system) =>
        runThroughput(name, system, receiver, {
          events: Math.round(deliveries / fanOut),
          perTransaction: Math.max(1, Math.floor(deliveriesPerTransaction / fanOut)),
          rolloutEvents,
          warmupEvents: Math.round(deliveries / fanOut),
          notes: [note],
        }),
      );
  return {
    limit: () => runLimit(receiver, { deliveries, warmup: deliveries, concurrency }),
    engine1: throughput(startEngine, 1, "engine, fan-out 1", engineNote),
    // Order per rollout's own cost (printSummary sets it against engine1, run just before): the same
    // burst as rollouts of three events (created, progressing, succeeded), each delivery waiting for
    // the one before it.
    engine1Ordered: throughput(startEngine, 1, "engine, fan-out 1, rollouts of 3 events", engineNote, 3),
    // The same burst arriving as the paced scenarios' events do, each in a transaction of its own, from
    // as many callers at once as the emitting pool has connections: the burst that moderate rates are
    // held to event for event (commits, wake-ups and claims are shared here only by arriving together).
    engine1Single: () =>
      withSystem(server, receiver, 1, startEngine, (system) =>
        runThroughput("engine, fan-out 1, one event per transaction", system, receiver, {
          events: deliveries,
          perTransaction: 1,
          concurrentTransactions: emitterConnections,
          warmupEvents: deliveries,
          notes: [engineNote],
        }),
      ),
    baseline1: throughput(startBaseline, 1, "baseline pg-boss+axios, fan-out 1", baselineNote),
    engine100: throughput(startEngine, 100, "engine, fan-out 100", engineNote),
    // Pace's own cost (printSummary): engine100 with every webhook rate-limited, at a rate the burst
    // never reaches, so that the claim takes tokens from each one's pace row and is never held back.
    engine100Limited: throughput(
      startEngineLimited,
      100,
      "engine, fan-out 100, every webhook rate-limited",
      `${engineNote}; rate_limit_per_second = rate_limit_burst = ${unreachedRateLimit}`,
    ),
    baseline100: throughput(startBaseline, 100, "baseline pg-boss+axios, fan-out 100", baselineNote),
  };
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  const receiver = await startReceiverProcess();
  try {
    console.log("Delivery benchmark");
    console.log(
      `  node ${process.version}, ${cpus().length} cores, Postgres ${server.version} (${server.source}), receiver: child process on loopback`,
    );
    console.log(
      `  BENCH_SCALE=${scale}: ${deliveries} deliveries per throughput scenario, ${rounds} rounds (best kept), paced ${pacedSeconds} s`,
    );
    console.log(`  load average before: ${formatLoad()} (other work on this machine skews every number)`);
    console.log("");
    const runs = new ScenarioRuns();
    for (let round = 1; round <= rounds; round++) {
      for (const [key, run] of Object.entries(throughputScenarios(server, receiver))) {
        if (!selected(key)) continue;
        const result = await run();
        printProgress(round, result);
        runs.add(key, result);
      }
    }
    // Steady rates, one event per transaction; Postgres time per event from pg_stat_statements.
    const pgTimes = new Map<string, PgTimePerEvent>();
    const paced =
      (key: string, rate: number, name: string, note: string) => async (system: DeliverySystem) => {
        let measured = false;
        let writesBefore: ServerWrites | undefined;
        const result = await runPaced(name, system, receiver, {
          ratePerSecond: rate,
          seconds: pacedSeconds,
          notes: [note],
          // The warm-up's statements (the first of each prepared, so planned) are not counted.
          beforeMeasuring: async () => {
            measured = await resetStatementTimes(system.observer);
            writesBefore = await serverWrites(system.observer);
          },
        });
        if (writesBefore) {
          const writes = await serverWrites(system.observer);
          result.notes.push(formatServerWrites(writesBefore, writes, result.deliveries));
        }
        if (measured) {
          const times = await statementTimes(system.observer);
          result.notes.push(...formatStatementTimes(times, result.deliveries));
          pgTimes.set(key, perEvent(times, result.deliveries));
        }
        return result;
      };
    for (const [key, start, rate, note] of [
      ["enginePaced200", startEngine, 200, engineNote],
      ["enginePaced", startEngine, pacedRate, engineNote],
      ["baselinePaced", startBaseline, pacedRate, baselineNote],
    ] as const) {
      if (!selected(key)) continue;
      const name = `${start === startEngine ? "engine" : "baseline"}, ${rate} events/s`;
      const result = await withSystem(server, receiver, 1, start, paced(key, rate, name, note));
      printProgress(null, result);
      runs.add(key, result);
    }
    // The callers' share of those scenarios' Postgres CPU: their emits alone, with no engine running.
    const emitOnly = new Map<string, number>();
    for (const [key, rate] of [
      ["enginePaced200", 200],
      ["enginePaced", pacedRate],
    ] as const) {
      const us = selected(key) ? await emitOnlyPostgresUs(server, rate, pacedSeconds) : undefined;
      if (us !== undefined) emitOnly.set(key, us);
    }
    const memory = selected("memory") ? await measureServiceMemory(server, receiver, deliveries) : undefined;
    if (memory) {
      console.log(
        `  the service in its own process (npm start, no cluster): ${describeMemory(memory, deliveries)}`,
      );
    }
    printSummary(runs, pacedRate, pgTimes, memory, emitOnly);
    console.log(`  load average after: ${formatLoad()}`);
  } finally {
    await receiver.close();
    await server.stop();
  }
}

runBench(main);
