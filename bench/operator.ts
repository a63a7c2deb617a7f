// Operator benchmark: the controller role of the real service against the FAKE Kubernetes API server of the
// tests (in this process), with a real Postgres and a loopback receiver (a child process).
//   A. N Webhook resources created at once → every one Ready=True, observedGeneration 1, webhookId set.
//   B. Deployment rollouts at a steady rate (created → ready → succeeded by writes ~50 ms apart) → one
//      deployment.* event per transition, recorded and delivered.
// Run: npx tsx bench/operator.ts
// Env: BENCH_OPERATOR_WEBHOOKS (1000), BENCH_OPERATOR_NAMESPACES (10), BENCH_OPERATOR_RATE (100 rollouts/s),
// BENCH_OPERATOR_SECONDS (10), BENCH_OPERATOR_DEPLOYMENTS (200: each is rolled out rate×seconds/200 times),
// BENCH_OPERATOR_PROGRESS_WRITES (0: extra status writes per rollout that change no phase, as replicas come
// up), BENCH_OPERATOR_ONLY (webhooks|rollouts: one scenario), BENCH_OPERATOR_ENV (extra service settings, e.g. "DATABASE_POOL_SIZE=20 NAMESPACE_SELECTOR=x"),
// BENCH_DATABASE_URL (else an embedded Postgres). Exits 0 whether or not the numbers are good; non-zero when
// something crashed.
import { cpus } from "node:os";
import { type BenchServer, startBenchServer } from "./database.js";
import { formatLoad, runBench } from "./entry.js";
import { describeWindow, formatRows } from "./operator-cluster.js";
import { type LagStats, type RolloutsResult, runRollouts } from "./operator-rollouts.js";
import { runWebhooks, type WebhooksResult } from "./operator-webhooks.js";
import { startReceiverProcess } from "./receiver-process.js";

const numberFromEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

const webhooks = Math.round(numberFromEnv("BENCH_OPERATOR_WEBHOOKS", 1000));
const namespaces = Math.round(numberFromEnv("BENCH_OPERATOR_NAMESPACES", 10));
const rate = numberFromEnv("BENCH_OPERATOR_RATE", 100);
const seconds = numberFromEnv("BENCH_OPERATOR_SECONDS", 10);
const deployments = Math.round(numberFromEnv("BENCH_OPERATOR_DEPLOYMENTS", 200));
const progressWrites = Math.round(Number(process.env.BENCH_OPERATOR_PROGRESS_WRITES ?? 0));
if (!Number.isInteger(progressWrites) || progressWrites < 0)
  throw new Error("BENCH_OPERATOR_PROGRESS_WRITES must be a whole number");
const extraEnv = Object.fromEntries(
  (process.env.BENCH_OPERATOR_ENV ?? "")
    .split(/\s+/)
    .filter((pair) => pair.includes("="))
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
);
const only = process.env.BENCH_OPERATOR_ONLY ?? "";
if (!["", "webhooks", "rollouts"].includes(only))
  throw new Error("BENCH_OPERATOR_ONLY must be webhooks or rollouts");
const timeoutMs = 120_000;

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

function printWebhooks(result: WebhooksResult): void {
  console.log(
    `A. ${result.resources} Webhook resources created at once in ${result.namespaces} namespaces (${result.withSecret} with a secretRef); creating them took ${fixed(result.createMs)} ms`,
  );
  console.log(
    formatRows(
      ["measure", "value"],
      [
        ["all Ready (first create → last Ready)", `${fixed(result.elapsedMs / 1000, 2)} s`],
        ["resources/s", fixed(result.resourcesPerSecond)],
        ["time to Ready p50", `${fixed(result.p50Ms)} ms`],
        ["time to Ready p99", `${fixed(result.p99Ms)} ms`],
        ["time to Ready max", `${fixed(result.maxMs)} ms`],
        ["webhook rows in Postgres", String(result.rows)],
        ["resources not Ready / wrong id / wrong hasSecret", String(result.mismatched)],
      ],
    ),
  );
  console.log("  until all Ready:");
  for (const line of describeWindow(result.window)) console.log(`    ${line}`);
  console.log(
    `  after that, until the operator settled (${fixed(result.settledMs / 1000, 2)} s after the first create):`,
  );
  for (const line of describeWindow(result.afterReady)) console.log(`    ${line}`);
  console.log("");
}

function lagRows(label: string, lags: Map<string, LagStats>): string[][] {
  return [...lags].map(([step, stats]) => [
    `${label}, ${step}`,
    String(stats.count),
    fixed(stats.p50Ms),
    fixed(stats.p99Ms),
    fixed(stats.maxMs),
  ]);
}

function printRollouts(result: RolloutsResult): void {
  console.log(
    `B. ${result.rollouts} rollouts at ${result.targetRate}/s over ${result.deployments} Deployments in ${result.namespaces} namespaces (${result.writesPerRollout} writes each, over 100 ms); 1 Webhook per namespace → receiver`,
  );
  const verdict =
    result.complete === result.rollouts && result.duplicates === 0 && result.unexpected === 0 ? "yes" : "NO";
  console.log(
    formatRows(
      ["measure", "value"],
      [
        ["rollouts started/s (achieved)", fixed(result.achievedRate, 1)],
        [
          "write lateness vs schedule p50 / p99 / max",
          `${fixed(result.writeLateness.p50Ms)} / ${fixed(result.writeLateness.p99Ms)} / ${fixed(result.writeLateness.maxMs)} ms`,
        ],
        ["events recorded", `${result.events} of ${result.rollouts * 3}`],
        ["events recorded/s", fixed(result.eventsPerSecond)],
        [
          "every rollout exactly created, ready, succeeded",
          `${verdict} (${result.complete}/${result.rollouts})`,
        ],
        [
          "duplicate / missing / unexpected events",
          `${result.duplicates} / ${result.missing} / ${result.unexpected}`,
        ],
        ["deliveries received (duplicates)", `${result.received} (${result.receivedDuplicates})`],
        [
          "last event row / last delivery after the last write",
          `${fixed(result.recordedAfterLastWriteMs)} / ${fixed(result.receivedAfterLastWriteMs)} ms`,
        ],
      ],
    ),
  );
  console.log("");
  console.log(
    formatRows(
      ["lag from the write", "events", "p50 ms", "p99 ms", "max ms"],
      [
        ...lagRows("→ event row created_at", result.toEventRow),
        ...lagRows("→ receiver got it", result.toReceiver),
      ],
    ),
  );
  for (const line of describeWindow(result.window)) console.log(`  ${line}`);
  console.log("");
}

async function main(): Promise<void> {
  const server: BenchServer = await startBenchServer();
  const receiver = await startReceiverProcess();
  try {
    console.log("Operator benchmark (controllers against the FAKE Kubernetes API server, in this process)");
    console.log(
      `  node ${process.version}, ${cpus().length} cores, Postgres ${server.version} (${server.source}), receiver: child process on loopback`,
    );
    if (Object.keys(extraEnv).length > 0) console.log(`  service settings: ${JSON.stringify(extraEnv)}`);
    console.log(`  load average before: ${formatLoad()} (other work on this machine skews every number)`);
    console.log("");

    if (only !== "rollouts") {
      const first = await server.freshDatabase("operator_webhooks");
      try {
        printWebhooks(
          await runWebhooks(first, { resources: webhooks, namespaces, timeoutMs, env: extraEnv }),
        );
      } finally {
        await first.drop();
      }
    }
    if (only !== "webhooks") {
      const second = await server.freshDatabase("operator_rollouts");
      try {
        printRollouts(
          await runRollouts(second, receiver, {
            rate,
            seconds,
            deployments,
            namespaces,
            timeoutMs,
            progressWrites,
            env: extraEnv,
          }),
        );
      } finally {
        await second.drop();
      }
    }
    console.log(`  load average after: ${formatLoad()}`);
  } finally {
    await receiver.close();
    await server.stop();
  }
}

runBench(main);
