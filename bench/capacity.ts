// Capacity: 1, 2 and 4 replicas (built service processes, as `npm start` runs them) sharing one Postgres,
// at burst and at moderate rates, with the Postgres CPU per delivery from /proc, all its processes.
// Run: npm run bench:capacity (npm run bench runs it after bench/delivery.ts).
// Env: BENCH_SCALE (default 1: 20k events per burst, 10 s per paced rate), BENCH_REPLICAS ("1,2,4").
// Exits 0 whatever the figures; non-zero when something crashed.
import { cpus } from "node:os";
import { type BenchServer, startBenchServer } from "./database.js";
import { runPaced } from "./driver.js";
import { formatLoad, runBench } from "./entry.js";
import { benchEvents, chunk, waitUntilAllDone } from "./fixtures.js";
import { postgresCpuBetween, processesCpuMs, samplePostgresCpu } from "./postgres-cpu.js";
import { type ReceiverProcess, startReceiverProcess } from "./receiver-process.js";
import { type Replicas, startReplicas } from "./replicas.js";

const scale = Number(process.env.BENCH_SCALE ?? 1);
const replicaCounts = (process.env.BENCH_REPLICAS ?? "1,2,4").split(",").map(Number);
if (!replicaCounts.every((count) => Number.isInteger(count) && count > 0))
  throw new Error("BENCH_REPLICAS must be whole numbers ≥ 1, separated by commas (e.g. 1,2,4)");
const burstEvents = Math.max(1_000, Math.round(20_000 * scale));
const pacedSeconds = Math.max(2, 10 * scale);
const pacedRates = [200, 500];
// As bench/delivery.ts runs the engine, so that one replica's figures compare with its burst scenario.
const settings = {
  DELIVERY_CONCURRENCY: "128",
  DELIVERY_PER_WEBHOOK_CONCURRENCY: "128",
  DATABASE_POOL_SIZE: "10",
};

interface Row {
  replicas: number;
  load: string;
  deliveriesPerSecond: number;
  p99Ms?: number;
  /** µs of CPU per delivery. */
  postgresUs: number | null;
  replicasUs: number;
  /** Postgres CPU / wall time: how many cores Postgres kept busy. */
  postgresCores: number | null;
}

/**
 * Runs `work`, which delivers `deliveries` and calls `start` where its measured part begins, and returns
 * the CPU Postgres and the replicas spent from there on.
 */
async function measured(
  system: Replicas,
  deliveries: number,
  work: (start: () => void) => Promise<{ elapsedMs: number }>,
): Promise<Pick<Row, "postgresUs" | "replicasUs" | "postgresCores">> {
  let postgresBefore = samplePostgresCpu();
  let replicasBefore = processesCpuMs(system.pids);
  const { elapsedMs } = await work(() => {
    postgresBefore = samplePostgresCpu();
    replicasBefore = processesCpuMs(system.pids);
  });
  const postgresMs = postgresCpuBetween(postgresBefore, samplePostgresCpu());
  return {
    postgresUs: postgresMs === null ? null : (postgresMs * 1000) / deliveries,
    replicasUs: ((processesCpuMs(system.pids) - replicasBefore) * 1000) / deliveries,
    postgresCores: postgresMs === null ? null : postgresMs / elapsedMs,
  };
}

/** A burst: after a warm-up of 2,000, `burstEvents` emitted at once in 500-event transactions. */
async function burst(system: Replicas, replicas: number): Promise<Row> {
  const emitAndDrain = async (events: number, expected: number) => {
    for (const batch of chunk(benchEvents(system.project, events), 500)) await system.emit(batch);
    return waitUntilAllDone(system.observer, system.project.id, expected, 300_000);
  };
  await emitAndDrain(2_000, 2_000);
  let elapsedMs = 0;
  const cpu = await measured(system, burstEvents, async (start) => {
    start();
    const startedAt = Date.now();
    elapsedMs = (await emitAndDrain(burstEvents, 2_000 + burstEvents)) - startedAt;
    return { elapsedMs };
  });
  return { replicas, load: "burst", deliveriesPerSecond: (burstEvents * 1000) / elapsedMs, ...cpu };
}

/** One event per transaction at `rate` for `pacedSeconds` (bench/driver.ts's paced scenario). */
async function paced(
  system: Replicas,
  replicas: number,
  rate: number,
  receiver: ReceiverProcess,
): Promise<Row> {
  let p99Ms = 0;
  let deliveriesPerSecond = 0;
  const cpu = await measured(system, Math.round(rate * pacedSeconds), async (start) => {
    const result = await runPaced(`${replicas} replicas, ${rate}/s`, system, receiver, {
      ratePerSecond: rate,
      seconds: pacedSeconds,
      notes: [],
      beforeMeasuring: async () => start(),
    });
    p99Ms = result.p99Ms;
    deliveriesPerSecond = result.achievedRate;
    return { elapsedMs: result.elapsedMs };
  });
  return { replicas, load: `${rate} events/s`, deliveriesPerSecond, p99Ms, ...cpu };
}

async function withReplicas<T>(
  server: BenchServer,
  receiver: ReceiverProcess,
  replicas: number,
  run: (system: Replicas) => Promise<T>,
): Promise<T> {
  const database = await server.freshDatabase(`capacity_${replicas}`);
  try {
    const system = await startReplicas(database, receiver.url, 1, replicas, settings);
    try {
      return await run(system);
    } finally {
      await system.close();
    }
  } finally {
    await database.drop();
  }
}

const formatRow = (row: Row) =>
  [
    `${row.replicas}`.padStart(8),
    row.load.padEnd(14),
    row.deliveriesPerSecond.toFixed(0).padStart(12),
    (row.p99Ms === undefined ? "" : row.p99Ms.toFixed(1)).padStart(8),
    (row.postgresUs?.toFixed(0) ?? "n/a").padStart(13),
    (row.postgresCores?.toFixed(2) ?? "n/a").padStart(14),
    row.replicasUs.toFixed(0).padStart(13),
  ].join("  ");

/**
 * The model, from the CPU per delivery of one replica (more replicas than cores here measure contention).
 * A busy system runs in the burst regime (claims and outcome writes batched), so Postgres saturates at
 * its cores divided by the burst figure; at a steady moderate rate each event pays for its own
 * transactions, which costs more per delivery but little in all.
 */
function printModel(rows: Row[], cores: number): void {
  const one = rows.filter((row) => row.replicas === 1 && row.postgresUs);
  const burstRow = one.find((row) => row.load === "burst");
  if (!burstRow) return;
  const perCore = (us: number) => (1e6 / us).toFixed(0);
  console.log("");
  console.log("  Model (CPU per delivery of one replica):");
  for (const row of one)
    console.log(
      `    ${row.load}: ${perCore(row.postgresUs as number)} deliveries/s per Postgres core, ${perCore(row.replicasUs)} per replica core`,
    );
  console.log(
    `    Postgres of ${cores} cores saturates near ${(((cores * 1e6) / (burstRow.postgresUs as number)) * 0.8).toFixed(0)} deliveries/s (80% of its cores at the burst cost); replicas add throughput until then, ${perCore(burstRow.replicasUs)} deliveries/s per replica core`,
  );
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  const receiver = await startReceiverProcess();
  try {
    const cores = cpus().length;
    console.log("Capacity benchmark: replicas sharing one Postgres");
    console.log(
      `  node ${process.version}, ${cores} cores, Postgres ${server.version} (${server.source}), receiver: child process on loopback`,
    );
    console.log(
      `  each replica: the built service (npm start's Node flags), ${Object.entries(settings)
        .map(([name, value]) => `${name}=${value}`)
        .join(" ")}, one webhook`,
    );
    console.log(
      `  burst: ${burstEvents} events after 2,000 of warm-up; paced: ${pacedRates.join(" and ")} events/s for ${pacedSeconds} s, one event per transaction`,
    );
    if (replicaCounts.some((count) => count > cores))
      console.log(
        `  more replicas than cores (${cores}): those rows measure contention for the cores, not added capacity`,
      );
    console.log(`  load average before: ${formatLoad()} (other work on this machine skews every number)`);
    console.log("");
    console.log(
      "  replicas  load            deliveries/s  p99 ms  Postgres µs/d  Postgres cores  replicas µs/d",
    );
    const rows: Row[] = [];
    for (const replicas of replicaCounts) {
      const scenarios = [
        (system: Replicas) => burst(system, replicas),
        ...pacedRates.map((rate) => (system: Replicas) => paced(system, replicas, rate, receiver)),
      ];
      for (const scenario of scenarios) {
        const row = await withReplicas(server, receiver, replicas, scenario);
        console.log(formatRow(row));
        rows.push(row);
      }
    }
    printModel(rows, cores);
    console.log(`  load average after: ${formatLoad()}`);
  } finally {
    await receiver.close();
    await server.stop();
  }
}

runBench(main);
