import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, useCluster } from "../support/cluster.js";
import { chartDir } from "../support/monitoring-files.js";
import { podsOf, receiverDeliveries } from "../support/node-cluster.js";
import {
  deliveredRollouts as deliveredBy,
  deploymentBurst,
  installNodeRelease,
  leaseHolder,
  type NodeRelease,
  removeNodeRelease,
  sampleMemory,
} from "../support/node-workloads.js";
import { eventOf, type LoggedDelivery, signedWith } from "../support/receiver-log.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";

// The operator's own lifecycle on a real node, its two replicas running from the image as the chart's
// defaults run them: one leader (the Lease), failover when the leader's pod is deleted, a rolling
// restart by the kubelet's SIGTERM in the middle of a burst of rollouts, and `helm upgrade` to a new
// image tag in the middle of another. No delivery may be lost, and none sent twice: SIGTERM lets the
// sends in flight finish and be recorded before a replica exits.

const namespace = "wo-lifecycle";
const receiver = "wo-lifecycle-receiver";
const project = "wo-lifecycle-apps";
const events = ["deployment.created", "deployment.ready", "deployment.succeeded"];
const burstSize = 20;
const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
  version: string;
};

let cluster: Cluster;
let chart: ChartRelease;
let lease = "";

const operatorPods = () => podsOf(cluster, namespace, "app.kubernetes.io/component=operator");

/** Waits for created, ready and succeeded of every commit, then until nothing more arrives for 10 s. */
const deliveredRollouts = (commits: string[]) => deliveredBy(cluster, receiver, commits, events);

function expectEachOnceSignedInOrder(all: LoggedDelivery[], commits: string[]) {
  const ofBurst = all.filter((d) => commits.includes(eventOf(d).payload.commit_sha ?? ""));
  const perEvent = new Map<string, number>();
  for (const delivery of ofBurst)
    perEvent.set(eventOf(delivery).id, (perEvent.get(eventOf(delivery).id) ?? 0) + 1);
  expect(
    [...perEvent.values()].filter((n) => n > 1),
    "events delivered more than once",
  ).toEqual([]);
  expect(ofBurst).toHaveLength(commits.length * events.length);
  for (const delivery of ofBurst) expect(signedWith("demo-signing-secret-change-me", delivery)).toBe(true);
  // Order per rollout (docs/deliveries.md): the receiver logs each request as it arrives, and each
  // rollout's events arrived in the order they happened, restarts, failovers and upgrades or not.
  const arrived = (commit: string) =>
    ofBurst.filter((d) => eventOf(d).payload.commit_sha === commit).map((d) => d.event);
  expect(
    commits
      .filter((commit) => arrived(commit).join() !== events.join())
      .map((commit) => [commit, arrived(commit)]),
    "rollouts whose events arrived out of order",
  ).toEqual([]);
}

const release: NodeRelease = {
  chartDir,
  sets: [`config.delivery.allowedDestinations={.${receiver}.svc.cluster.local}`],
  project,
  receivers: [receiver],
};

beforeAll(async () => {
  cluster = useCluster();
  chart = chartRelease(cluster, "webhook-operator", namespace);
  await installNodeRelease(cluster, chart, release);
  lease = `${chart.fullname}-leader`;
});

afterAll(() => removeNodeRelease(cluster, chart, release));

describe("the operator's pods through restarts, failover and upgrades", () => {
  it("runs two replicas, one of them holding the Lease", async () => {
    const pods = await operatorPods();
    expect(pods.filter((pod) => pod.ready)).toHaveLength(2);
    expect(pods.map((pod) => pod.metadata.name)).toContain(await leaseHolder(cluster, namespace, lease));
  });

  it("loses and repeats nothing when `kubectl rollout restart` stops the replicas in the middle of a burst", async () => {
    // The Deployment's pods (<fullname>-<replica set hash>-<suffix>), not Postgres's.
    const memory = sampleMemory(
      cluster,
      namespace,
      new RegExp(`^${chart.fullname}-[a-z0-9]{8,10}-[a-z0-9]{5}$`),
    );
    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "restart", burstSize));
    await waitUntil(
      "the burst's first deliveries",
      async () => ((await receiverDeliveries(cluster, receiver)).length >= 5 ? true : undefined),
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    await cluster.kubectl(["-n", namespace, "rollout", "restart", `deployment/${chart.fullname}`]);
    await cluster.kubectl([
      "-n",
      namespace,
      "rollout",
      "status",
      `deployment/${chart.fullname}`,
      "--timeout=300s",
    ]);
    const commits = Array.from({ length: burstSize }, (_, i) => `restart-${i}`);
    expectEachOnceSignedInOrder(await deliveredRollouts(commits), commits);
    const peaks = await memory.stop();
    console.log(
      `operator pods' peak working set during the burst: ${[...peaks].map(([pod, mib]) => `${pod} ${mib.toFixed(0)} MiB`).join(", ")}`,
    );
    expect(peaks.size).toBeGreaterThan(0);
  });

  it("fails over to the other replica when the leader's pod is deleted", async () => {
    const leader = await leaseHolder(cluster, namespace, lease);
    await cluster.kubectl(["-n", namespace, "delete", "pod", leader, "--wait=false"]);
    const next = await waitUntil(
      "another replica holding the Lease",
      async () => {
        const holder = await leaseHolder(cluster, namespace, lease);
        return holder !== leader ? holder : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect((await operatorPods()).map((pod) => pod.metadata.name)).toContain(next);
    // The new leader's controllers see rollouts.
    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "failover", 1));
    expectEachOnceSignedInOrder(await deliveredRollouts(["failover-0"]), ["failover-0"]);
  });

  it("rolls to a new image tag with `helm upgrade` in the middle of a burst, losing nothing", async () => {
    await cluster.node(["tag", `webhook-operator:${version}`, `webhook-operator:${version}-next`]);
    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "upgrade", burstSize));
    await chart.helm([
      "upgrade",
      chart.release,
      chartDir,
      "--reuse-values",
      "--set",
      `image.tag=${version}-next`,
      "--wait",
    ]);
    const pods = await operatorPods();
    expect(pods.map((pod) => pod.spec.containers[0]?.image)).toEqual(
      pods.map(() => `webhook-operator:${version}-next`),
    );
    const commits = Array.from({ length: burstSize }, (_, i) => `upgrade-${i}`);
    expectEachOnceSignedInOrder(await deliveredRollouts(commits), commits);
  });
});
