// Operator benchmark on a real Kubernetes control plane (scripts/cluster/start.sh: etcd, kube-apiserver,
// controller-manager, scheduler, a kwok node, all on loopback), a real Postgres and a loopback receiver
// (a child process); the service runs in this process.
//   A. N Webhook resources created (32 creates in flight) → every one Ready=True, observedGeneration 1,
//      webhookId set.
//   B. M Deployments created at once → M concurrent rollouts driven by the Deployment controller →
//      created, ready and succeeded of each at the receiver, exactly once.
// Run: npx tsx bench/operator.ts (npm run bench runs it after bench/delivery.ts). The first run builds
// the control plane (scripts/cluster/build.sh; cached afterwards).
// Env: BENCH_OPERATOR_WEBHOOKS (1000), BENCH_OPERATOR_ROLLOUTS (100), BENCH_OPERATOR_NAMESPACES (10),
// BENCH_OPERATOR_ONLY (webhooks|rollouts), BENCH_OPERATOR_ENV (extra service settings, e.g.
// "DATABASE_POOL_SIZE=20"), BENCH_CLUSTER_DIR (a running control plane to use instead of a new one),
// BENCH_DATABASE_URL (else an embedded Postgres). Exits 0 whether or not the numbers are good; non-zero
// when something crashed.
import { cpus } from "node:os";
import { startBenchServer } from "./database.js";
import { formatLoad, runBench } from "./entry.js";
import { startBenchCluster } from "./operator-cluster.js";
import { runRollouts } from "./operator-rollouts.js";
import { runWebhooks } from "./operator-webhooks.js";
import { describeWindow, formatRows } from "./operator-window.js";
import { startReceiverProcess } from "./receiver-process.js";

const countFromEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const webhooks = countFromEnv("BENCH_OPERATOR_WEBHOOKS", 1000);
const rollouts = countFromEnv("BENCH_OPERATOR_ROLLOUTS", 100);
const namespaces = countFromEnv("BENCH_OPERATOR_NAMESPACES", 10);
const only = process.env.BENCH_OPERATOR_ONLY ?? "";
if (!["", "webhooks", "rollouts"].includes(only))
  throw new Error("BENCH_OPERATOR_ONLY must be webhooks or rollouts");
const env = Object.fromEntries(
  (process.env.BENCH_OPERATOR_ENV ?? "")
    .split(/\s+/)
    .filter((pair) => pair.includes("="))
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
);
const timeoutMs = 300_000;
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : "n/a");

async function main(): Promise<void> {
  const server = await startBenchServer();
  const receiver = await startReceiverProcess();
  const kubernetes = await startBenchCluster();
  try {
    console.log("Operator benchmark (controllers against a real control plane on loopback, in this process)");
    console.log(
      `  node ${process.version}, ${cpus().length} cores, Postgres ${server.version} (${server.source}), control plane up in ${(kubernetes.startedInMs / 1000).toFixed(1)} s`,
    );
    if (Object.keys(env).length > 0) console.log(`  service settings: ${JSON.stringify(env)}`);
    console.log(`  load average before: ${formatLoad()} (other work on this machine skews every number)\n`);

    if (only !== "rollouts") {
      const database = await server.freshDatabase("operator_webhooks");
      try {
        const a = await runWebhooks(database, kubernetes.cluster, {
          resources: webhooks,
          namespaces,
          timeoutMs,
          env,
        });
        console.log(
          `A. ${a.resources} Webhook resources in ${a.namespaces} namespaces (${a.withSecret} with a secretRef); the creates took ${(a.createMs / 1000).toFixed(2)} s`,
        );
        console.log(
          formatRows(
            ["measure", "value"],
            [
              ["all Ready (first create → last Ready)", `${(a.elapsedMs / 1000).toFixed(2)} s`],
              ["resources Ready/s", (a.resources / (a.elapsedMs / 1000)).toFixed(0)],
              ["time to Ready p50 / p99 / max", `${ms(a.p50Ms)} / ${ms(a.p99Ms)} / ${ms(a.maxMs)}`],
              ["webhook rows / status not matching them", `${a.rows} / ${a.mismatched}`],
            ],
          ),
        );
        for (const line of describeWindow(a.window)) console.log(`  ${line}`);
        console.log("");
      } finally {
        await database.drop();
      }
    }
    if (only !== "webhooks") {
      const database = await server.freshDatabase("operator_rollouts");
      try {
        const b = await runRollouts(database, kubernetes.cluster, receiver, {
          rollouts,
          namespaces,
          timeoutMs,
          env,
        });
        const verdict = b.complete === b.rollouts && b.duplicates === 0 && b.unexpected === 0 ? "yes" : "NO";
        console.log(
          `B. ${b.rollouts} Deployments created at once in ${b.namespaces} namespaces; 1 Webhook per namespace → receiver (after one warm-up rollout per namespace)`,
        );
        console.log(
          formatRows(
            ["measure", "value"],
            [
              ["every rollout exactly created, ready, succeeded", `${verdict} (${b.complete}/${b.rollouts})`],
              [
                "deliveries received / duplicates / unexpected events",
                `${b.received} / ${b.duplicates} / ${b.unexpected}`,
              ],
              ["first create → last delivery", `${(b.elapsedMs / 1000).toFixed(2)} s`],
            ],
          ),
        );
        console.log(
          formatRows(
            ["create → delivery at the receiver", "events", "p50", "p99", "max"],
            [...b.lags].map(([step, s]) => [step, String(s.count), ms(s.p50Ms), ms(s.p99Ms), ms(s.maxMs)]),
          ),
        );
        console.log(
          formatRows(
            ["status visible → delivery (the operator's share)", "events", "p50", "p99", "max"],
            [...b.operatorLags].map(([step, s]) => [
              step,
              String(s.count),
              ms(s.p50Ms),
              ms(s.p99Ms),
              ms(s.maxMs),
            ]),
          ),
        );
        const worst = Math.max(...[...b.operatorLags.values()].map((s) => s.p99Ms));
        console.log(
          `  ${worst < 100 ? "PASS" : "MISS"}  the operator's share p99 < 100 ms for every step (${ms(worst)})`,
        );
        for (const line of describeWindow(b.window)) console.log(`  ${line}`);
        console.log("");
      } finally {
        await database.drop();
      }
    }
    console.log(`  load average after: ${formatLoad()}`);
  } finally {
    await kubernetes.stop();
    await receiver.close();
    await server.stop();
  }
}

runBench(main);
