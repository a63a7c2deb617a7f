// Big-cluster benchmark: the operator against 5,000 workloads in 500 namespaces, a third of each kind it
// watches (Deployments and StatefulSets with replicas 0, DaemonSets whose nodeSelector matches no node,
// all with ordinary container specs), applied with `kubectl apply` on a real control plane
// (scripts/cluster/start.sh: etcd, kube-apiserver, controller-manager, scheduler, a kwok node, all on
// loopback). This build and an earlier one (BENCH_BIG_BASELINE, default a0d5f81: full objects in the
// caches, a ReplicaSet request per Deployment, one queue; it watches Deployments only, so its figures
// are those of the Deployments among the workloads) each run as `npm start` runs the service, in a
// process of their own, on a fresh database, and are measured alike:
//   idle: RSS and V8 heap leading on the cluster before the workloads, 10 s after it leads;
//   start: from spawn until every rollout is recorded;
//   RSS, peak RSS and heap with the workloads, 10 s after the start caught up;
//   restart (stopped, started again) and leader change (a standby takes over from the stopped leader):
//     until every workload was reconciled again;
//   in each of the three, two live rollouts (new revisions of Deployments whose namespace has a
//     Webhook to a loopback receiver): one made as the phase begins (at start, once the Webhook is in
//     the fresh database), one once a tenth of the workloads are reconciled; each timed from its write
//     to its created and succeeded deliveries.
// Run: npm run bench:big-cluster (npm run bench runs it last; about 15 minutes). Heavy: run it alone,
// under `flock /tmp/wo-cluster.lock`. Env: BENCH_BIG_WORKLOADS (5000), BENCH_BIG_NAMESPACES (500),
// BENCH_BIG_BASELINE (a commit, or "none"), BENCH_BIG_CAP_S (how long any phase may take, 300; the
// baseline's 150), BENCH_CLUSTER_DIR, BENCH_DATABASE_URL. Exits 0 whatever the figures.
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { createPool } from "../src/db/pool.js";
import { buildAt } from "./big-cluster-baseline.js";
import { type Build, createLiveWebhook, startLiveReceiver } from "./big-cluster-operator.js";
import { type BuildFigures, type Memory, measureBuild, measureIdle } from "./big-cluster-phases.js";
import { printFigures } from "./big-cluster-report.js";
import {
  applyWorkloads,
  kindCounts,
  raiseControllerManagerRate,
  waitRolledOut,
} from "./big-cluster-workloads.js";
import { startBenchServer } from "./database.js";
import { formatLoad, runBench } from "./entry.js";
import { startBenchCluster } from "./operator-cluster.js";

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
};
const workloads = count("BENCH_BIG_WORKLOADS", 5000);
const namespaces = count("BENCH_BIG_NAMESPACES", 500);
const capMs = count("BENCH_BIG_CAP_S", 300) * 1000;
const baselineCommit = process.env.BENCH_BIG_BASELINE ?? "a0d5f81";
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  if (workloads % namespaces !== 0)
    throw new Error("BENCH_BIG_WORKLOADS must be a multiple of BENCH_BIG_NAMESPACES");
  const perNamespace = workloads / namespaces;
  // The live rollouts are of the first two Deployments of a namespace (the 1st and 4th workloads).
  if (perNamespace < 4) throw new Error("BENCH_BIG_WORKLOADS must be at least 4 × BENCH_BIG_NAMESPACES");
  const kinds = kindCounts(namespaces, perNamespace);
  const ofKinds = Object.entries(kinds)
    .map(([kind, n]) => `${n} ${kind}s`)
    .join(", ");
  const builds: Build[] = [{ name: "this-build" }];
  const baseline = baselineCommit === "none" ? undefined : await buildAt(baselineCommit);
  if (baseline) builds.push(baseline.build);
  const server = await startBenchServer();
  const receiver = await startLiveReceiver();
  const kubernetes = await startBenchCluster();
  const files = await mkdtemp(path.join(tmpdir(), "wo-bench-big-"));
  try {
    const { cluster } = kubernetes;
    console.log(
      `Big-cluster benchmark (${workloads} workloads in ${namespaces} namespaces: ${ofKinds}; the operator in a process of its own)`,
    );
    console.log(
      `  node ${process.version}, ${cpus().length} cores, Postgres ${server.version} (${server.source}), control plane up in ${seconds(kubernetes.startedInMs)}`,
    );
    console.log(`  load average before: ${formatLoad()} (other work on this machine skews every number)`);
    const idle = new Map<string, Memory>();
    for (const build of builds) {
      const database = await server.freshDatabase(`big_idle_${build.name}`);
      idle.set(build.name, await measureIdle(build, database.url, cluster, `big-idle-${build.name}`));
      await database.drop();
    }

    await raiseControllerManagerRate(cluster);
    let started = performance.now();
    const fileCount = await applyWorkloads(cluster, {
      namespaces,
      perNamespace,
      dir: files,
      parallel: 4,
    });
    console.log(
      `  kubectl apply of ${fileCount} files (${namespaces} namespaces, ${workloads} workloads): ${seconds(performance.now() - started)}`,
    );
    started = performance.now();
    await waitRolledOut(cluster, workloads, 1_800_000);
    console.log(
      `  every workload rolled out by its controller: ${seconds(performance.now() - started)} more`,
    );
    await createLiveWebhook(cluster, receiver.url);

    const figures = new Map<string, BuildFigures>();
    // The baseline watches Deployments only: it is waited on for theirs.
    const workloadsOf = (build: Build) => (build === baseline?.build ? kinds.Deployment : workloads);
    for (const build of builds) {
      const database = await server.freshDatabase(`big_${build.name}`);
      const observer = createPool(database.url, 2);
      try {
        figures.set(
          build.name,
          await measureBuild(
            build,
            { url: database.url, observer },
            {
              cluster,
              receiver,
              workloads: workloadsOf(build),
              capMs: build === baseline?.build ? Math.min(capMs, 150_000) : capMs,
              lease: `big-${build.name}`,
            },
          ),
        );
      } finally {
        await observer.end();
        await database.drop();
      }
    }
    printFigures({ workloadsOf, builds, idle, figures, baselineCommit });
    console.log(`\n  load average after: ${formatLoad()}`);
  } finally {
    await receiver.close();
    await kubernetes.stop();
    await server.stop();
    await baseline?.remove();
    await rm(files, { recursive: true, force: true });
  }
}

runBench(main);
