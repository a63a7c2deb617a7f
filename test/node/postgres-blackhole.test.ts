import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, useCluster } from "../support/cluster.js";
import { chartDir } from "../support/monitoring-files.js";
import { podsOf, receiverDeliveries } from "../support/node-cluster.js";
import {
  deploymentBurst,
  installNodeRelease,
  leaseHolder,
  type NodeRelease,
  removeNodeRelease,
} from "../support/node-workloads.js";
import { eventOf } from "../support/receiver-log.js";
import { waitUntil } from "../support/wait.js";

// The chart's Postgres pod cut off for 60 s in the middle of a burst of rollouts: its packets dropped
// (an iptables rule in the pod's own network namespace, on its interface to the node's bridge, so
// its own pg_isready probes on 127.0.0.1 still pass and the kubelet does not restart it). The
// operator's pods must answer /readyz 503 (the kubelet's readiness probe says so in its events),
// keep the Lease where it was (it lives in the Kubernetes API), lose no delivery once packets pass,
// and send at most the sends in flight twice. The reliability suite's `blackhole` measures the times.

const namespace = "wo-blackhole";
const receiver = "wo-blackhole-receiver";
const project = "wo-blackhole-apps";
const events = ["deployment.created", "deployment.ready", "deployment.succeeded"];
const burstSize = 20;
const cutMs = 60_000;

let cluster: Cluster;
let chart: ChartRelease;

/** The network namespace (of `ip netns`) holding `ip`: a pod's, made by the CNI plugin. */
function netnsOf(ip: string): string {
  const names = execFileSync("ip", ["netns", "list"], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.split(" ")[0] ?? "")
    .filter(Boolean);
  const found = names.find((name) =>
    execFileSync("ip", ["netns", "exec", name, "ip", "-4", "-o", "addr"], { encoding: "utf8" }).includes(
      ` ${ip}/`,
    ),
  );
  if (!found) throw new Error(`no network namespace holds ${ip}`);
  return found;
}

/** Drops TCP packets to port 5432 arriving on the pod's eth0; the returned function lets them pass. */
function dropPostgresPackets(netns: string): () => void {
  const rule = ["INPUT", "-i", "eth0", "-p", "tcp", "--dport", "5432", "-j", "DROP"];
  const iptables = (...args: string[]) =>
    execFileSync("ip", ["netns", "exec", netns, "iptables", "-w", "5", ...args], { stdio: "pipe" });
  iptables("-I", ...rule);
  let lifted = false;
  return () => {
    if (lifted) return;
    lifted = true;
    iptables("-D", ...rule);
  };
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
});

afterAll(() => removeNodeRelease(cluster, chart, release));

describe("the chart's Postgres cut off for 60 s during a burst", () => {
  it("answers /readyz 503, keeps the Lease, and delivers every rollout once packets pass", async () => {
    const operatorPods = () => podsOf(cluster, namespace, "app.kubernetes.io/component=operator");
    const [database] = await podsOf(cluster, namespace, "app.kubernetes.io/component=database");
    const ip = database?.status.podIP;
    if (!ip) throw new Error("the Postgres pod has no address");
    const netns = netnsOf(ip);
    const lease = `${chart.fullname}-leader`;
    const leader = await leaseHolder(cluster, namespace, lease);

    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "cut", burstSize));
    await waitUntil(
      "the burst's first deliveries",
      async () => ((await receiverDeliveries(cluster, receiver)).length >= 5 ? true : undefined),
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    const lift = dropPostgresPackets(netns);
    const cutAt = Date.now();
    let notReadyDuringCut: number;
    try {
      notReadyDuringCut = await waitUntil(
        "the operator's pods to be taken out of their Service",
        async () => {
          const pods = await operatorPods();
          return pods.length > 0 && pods.every((pod) => !pod.ready) ? pods.length : undefined;
        },
        { timeoutMs: cutMs, intervalMs: 1_000 },
      );
      // The fault lasts its length; this is the scenario, not a wait for something.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutMs - (Date.now() - cutAt))));
    } finally {
      lift();
    }
    const probeEvents = await cluster.kubectl([
      ...["-n", namespace, "get", "events", "--field-selector", "reason=Unhealthy"],
      ...["-o", "jsonpath={range .items[*]}{.message}{'\\n'}{end}"],
    ]);
    expect(probeEvents).toContain("Readiness probe failed: HTTP probe failed with statuscode: 503");
    expect(notReadyDuringCut).toBe(2);
    expect(await leaseHolder(cluster, namespace, lease)).toBe(leader);

    await waitUntil(
      "the operator's pods ready again",
      async () => {
        const pods = await operatorPods();
        return pods.length === 2 && pods.every((pod) => pod.ready) ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    const commits = Array.from({ length: burstSize }, (_, i) => `cut-${i}`);
    const wanted = commits.flatMap((commit) => events.map((event) => `${commit} ${event}`));
    const delivered = await waitUntil(
      `${wanted.length} deliveries`,
      async () => {
        const all = (await receiverDeliveries(cluster, receiver)).filter((d) =>
          commits.includes(eventOf(d).payload.commit_sha ?? ""),
        );
        const seen = new Set(all.map((d) => `${eventOf(d).payload.commit_sha} ${d.event}`));
        return wanted.every((key) => seen.has(key)) ? all : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 1_000 },
    );
    const perEvent = new Map<string, number>();
    for (const d of delivered) perEvent.set(eventOf(d).id, (perEvent.get(eventOf(d).id) ?? 0) + 1);
    const twice = [...perEvent.values()].reduce((sum, n) => sum + n - 1, 0);
    console.log(`Postgres cut off 60 s: ${delivered.length} deliveries, ${twice} sent twice`);
    // Twice at most: the sends in flight when the cut came (two replicas, 64 each).
    expect(twice).toBeLessThanOrEqual(128);
  });
});
