import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ApiRetry, type ApiTotals, startApiTraffic } from "../support/api-traffic.js";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, useCluster } from "../support/cluster.js";
import { chartDir } from "../support/monitoring-files.js";
import { podsOf, receiverDeliveries } from "../support/node-cluster.js";
import {
  deliveredRollouts as deliveredBy,
  deploymentBurst,
  expectEachOnceSigned,
  installNodeRelease,
  removeNodeRelease,
  sampleMemory,
} from "../support/node-workloads.js";
import { errorLines, followPodLogs, type PodLog } from "../support/pod-logs.js";
import {
  buildPreviousRelease,
  type PreviousRelease,
  previousReleaseOf,
} from "../support/previous-release.js";
import { eventOf, type LoggedDelivery } from "../support/receiver-log.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";

// An upgrade as a user makes it (docs/upgrading.md): the previous release (releases.json) installed
// from its own chart and image, a Webhook delivering a burst of rollouts and a client calling the API,
// then, while both run, the new CRD applied and `helm upgrade` to the code under test; then `kubectl
// rollout restart` of the new version in the middle of another burst. Nothing may be lost or sent
// twice (nor, by this version, out of order), no API call may fail, no replica of either version may
// log an error while they run side by side, and the migrations the new replicas ran must be the ones
// docs/upgrading.md lists for this version, each declared safe for the version before.

const namespace = "wo-upgrade";
const receiver = "wo-upgrade-receiver";
const project = "wo-upgrade-apps";
const client = "wo-upgrade-client";
const events = ["deployment.created", "deployment.ready", "deployment.succeeded"];
const burstSize = 20;
const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
  version: string;
};
const destinations = `config.delivery.allowedDestinations={.${receiver}.svc.cluster.local}`;

let cluster: Cluster;
let chart: ChartRelease;
let previous: PreviousRelease;

/**
 * Replaces the cluster's Webhook CRD with `dir`'s, whole (an earlier file of the suite left this
 * version's): a CRD is replaced only at the resourceVersion it has.
 */
async function useCrd(dir: string) {
  const crd = parse(readFileSync(path.join(dir, "crds/webhooks.webhook-operator.io.yaml"), "utf8"));
  const resourceVersion = (
    await cluster
      .kubectl(["get", "crd", crd.metadata.name, "-o", "jsonpath={.metadata.resourceVersion}"])
      .catch(() => "")
  ).trim();
  if (!resourceVersion) await cluster.kubectl(["create", "-f", "-"], JSON.stringify(crd));
  else
    await cluster.kubectl(
      ["replace", "-f", "-"],
      JSON.stringify({ ...crd, metadata: { ...crd.metadata, resourceVersion } }),
    );
}

/** Waits for created, ready and succeeded of every commit, then until nothing more arrives for 10 s. */
const deliveredRollouts = (commits: string[]) => deliveredBy(cluster, receiver, commits, events);

/** The migration rows of docs/upgrading.md that name this version. */
function documentedMigrations(): string[] {
  const doc = readFileSync(path.join(repoRoot, "docs/upgrading.md"), "utf8");
  return [...doc.matchAll(/^\| `(\d+_\w+)` \| ([^|]+) \| yes, because /gm)]
    .filter((match) => match[2]?.trim() === version)
    .map((match) => match[1] ?? "");
}

beforeAll(async () => {
  cluster = useCluster();
  // Built (or found in the cache) and imported into the node by test/support/node-setup.ts.
  previous = await buildPreviousRelease();
  chart = chartRelease(cluster, "webhook-operator", namespace);
  await useCrd(previous.chartDir);
  await installNodeRelease(cluster, chart, {
    chartDir: previous.chartDir,
    sets: [destinations],
    project,
    receivers: [receiver],
  });
});

afterAll(async () => {
  await useCrd(chartDir).catch(() => {});
  await removeNodeRelease(cluster, chart, { project, receivers: [receiver] }, [client]);
});

describe(`an upgrade from the previous release to ${version} under traffic, and a restart`, () => {
  let logs: PodLog[] = [];
  let api: { totals: ApiTotals; failures: string[]; retries: ApiRetry[] };
  let atUpgrade: ApiTotals;
  let delivered: LoggedDelivery[] = [];
  let following: ReturnType<typeof followPodLogs>;
  let traffic: Awaited<ReturnType<typeof startApiTraffic>>;
  const commits = Array.from({ length: burstSize }, (_, i) => `upgrade-${i}`);
  const restartCommits = Array.from({ length: burstSize }, (_, i) => `restart-${i}`);
  const operatorPods = () => podsOf(cluster, namespace, "app.kubernetes.io/component=operator");
  const firstDeliveriesOf = (burst: string[], by: string) =>
    waitUntil(
      `the burst's first deliveries, ${by}`,
      async () => {
        const all = await receiverDeliveries(cluster, receiver);
        const ofBurst = all.filter((d) => burst.includes(eventOf(d).payload.commit_sha ?? ""));
        return ofBurst.length >= 5 ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );

  const before = previousReleaseOf();
  it(`runs the previous release (${before.version}, ${before.commit.slice(0, 7)}) from its own image`, async () => {
    const pods = await operatorPods();
    expect(pods.filter((pod) => pod.ready)).toHaveLength(2);
    expect(pods.map((pod) => pod.spec.containers[0]?.image)).toEqual(
      pods.map(() => `webhook-operator:${previous.version}`),
    );
  });

  it("upgrades with `helm upgrade` in the middle of a burst of rollouts and API calls", async () => {
    following = followPodLogs(cluster, namespace, "app.kubernetes.io/component=operator", "operator");
    traffic = await startApiTraffic(cluster, {
      namespace: client,
      operatorNamespace: namespace,
      fullname: chart.fullname,
      project,
      hookUrl: `http://webhook-receiver.${receiver}.svc.cluster.local:8080/unused`,
    });
    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "upgrade", burstSize));
    await firstDeliveriesOf(commits, "by the previous release");
    const started = Date.now();
    // docs/upgrading.md, How to upgrade: the CRD first, then the chart.
    await cluster.kubectl(["apply", "--server-side", "--force-conflicts", "-f", path.join(chartDir, "crds")]);
    await chart.helm([
      "upgrade",
      chart.release,
      chartDir,
      "--set",
      destinations,
      "--wait",
      "--timeout",
      "10m",
    ]);
    console.log(
      `helm upgrade from ${previous.version} to ${version}: ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    delivered = await deliveredRollouts(commits);
    atUpgrade = await traffic.totals();
    console.log(`API calls until the upgrade was done: ${JSON.stringify(atUpgrade)}`);
    const pods = await operatorPods();
    expect(pods.map((pod) => pod.spec.containers[0]?.image)).toEqual(
      pods.map(() => `webhook-operator:${version}`),
    );
  });

  // Once and signed; not in order: the previous release did not keep each rollout's events in order.
  it("delivered every event of the burst once, signed, across both versions", () => {
    expectEachOnceSigned(delivered, commits, events, { inOrder: false });
  });

  // The previous release's replicas stop listening at SIGTERM while the Service may still send them a
  // connection: refused, or (once the pod is gone) never answered, and the client tries again. This
  // version's replicas keep serving through shutdownDelaySeconds first, so restarting them costs none:
  // no attempt begun once the restart began is tried again. (An attempt begun before it may still meet
  // the upgrade's last old replica and end 10 s later, after the restart began: a CI run had one begin
  // 1.4 s before it, after the upgrade's totals were read.)
  it("loses, repeats and reorders nothing, and leaves no API call to retry, when `kubectl rollout restart` stops this version's replicas in the middle of a burst", async () => {
    // The Deployment's pods (<fullname>-<replica set hash>-<suffix>), not Postgres's.
    const memory = sampleMemory(
      cluster,
      namespace,
      new RegExp(`^${chart.fullname}-[a-z0-9]{8,10}-[a-z0-9]{5}$`),
    );
    await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, "restart", burstSize));
    await firstDeliveriesOf(restartCommits, "by this version");
    const restartBegan = new Date();
    console.log(`kubectl rollout restart at ${restartBegan.toISOString()}`);
    await cluster.kubectl(["-n", namespace, "rollout", "restart", `deployment/${chart.fullname}`]);
    await cluster.kubectl([
      "-n",
      namespace,
      "rollout",
      "status",
      `deployment/${chart.fullname}`,
      "--timeout=300s",
    ]);
    expectEachOnceSigned(await deliveredRollouts(restartCommits), restartCommits, events, { inOrder: true });
    const peaks = await memory.stop();
    console.log(
      `operator pods' peak working set during the burst: ${[...peaks].map(([pod, mib]) => `${pod} ${mib.toFixed(0)} MiB`).join(", ")}`,
    );
    expect(peaks.size).toBeGreaterThan(0);
    const restarted = await traffic.totals();
    await waitUntil(
      "twenty more API calls",
      async () => ((await traffic.totals()).calls >= restarted.calls + 20 ? true : undefined),
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    api = await traffic.stop();
    logs = await following.stop();
    console.log(`API calls in all: ${JSON.stringify(api.totals)}`);
    if (api.retries.length > 0)
      console.log(`calls tried again:\n${api.retries.map((retry) => JSON.stringify(retry)).join("\n")}`);
    expect(api.retries.filter((retry) => new Date(retry.began) >= restartBegan)).toEqual([]);
  });

  it("answered every API call, none with an error, through the upgrade and the restart", () => {
    expect(api.failures).toEqual([]);
    expect(api.totals.failed).toBe(0);
    expect(api.totals.calls).toBeGreaterThan(atUpgrade.calls);
    expect(api.totals.deleted).toBe(api.totals.created);
  });

  it("logged no error in any replica of either version", () => {
    const images = new Set(logs.map((log) => log.image));
    expect(images).toEqual(new Set([`webhook-operator:${previous.version}`, `webhook-operator:${version}`]));
    for (const log of logs) expect(errorLines(log.text), `${log.pod} (${log.image})`).toEqual([]);
  });

  it("ran the migrations docs/upgrading.md lists for this version, each safe for the version before", () => {
    const migrated = logs
      .filter((log) => log.image === `webhook-operator:${version}`)
      .flatMap((log) => log.text.split("\n"))
      .filter((line) => line.includes('"msg":"database migrated"'))
      .flatMap((line) => (JSON.parse(line) as { migrations: string[] }).migrations);
    expect(migrated).toEqual(documentedMigrations());
  });
});
