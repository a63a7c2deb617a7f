import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { registry } from "../../src/metrics.js";
import { type ResilientInformer, resilientInformer } from "../../src/operator/informer.js";
import { shareConnections } from "../../src/operator/kube-connections.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience } from "../support/webhook-resources.js";

// The operator's informers (src/operator/informer.ts) through the faults a real API server makes only
// now and then, injected by a TLS proxy in front of the real one (failed, slow and throttled lists,
// 410 Gone, stalled and dropped watches), and through a real restart of kube-apiserver. Each time the
// cache heals, every object's add arrives exactly once, and retries back off.

interface LogLine {
  level: number;
  msg: string;
  resource?: string;
  retryInMs?: number;
  error?: string;
  code?: number | string;
  err?: unknown;
}

let cluster: Cluster;
let proxy: FaultProxy;
const label = uniqueName("informers");
const namespace = uniqueName("faults");
const path = `/api/v1/namespaces/${namespace}/configmaps`;
const running: ResilientInformer<V1ConfigMap>[] = [];

beforeAll(async () => {
  cluster = useCluster();
  proxy = await startFaultProxy(cluster);
  await createNamespaces(cluster, label, namespace);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((informer) => informer.stop()));
});
afterAll(async () => {
  await proxy?.close();
  await deleteNamespaces(cluster, label);
});

/** An informer on this file's ConfigMaps, recording every add/delete and every log line. */
function watchConfigMaps(kubeConfig: KubeConfig, options: { relistIntervalMs?: number } = {}) {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const core = shareConnections(kubeConfig).makeApiClient(CoreV1Api);
  const informer = resilientInformer<V1ConfigMap>({
    kubeConfig: shareConnections(kubeConfig),
    path,
    list: () => core.listNamespacedConfigMap({ namespace }),
    resource: `configmaps-${label}`,
    relistIntervalMs: options.relistIntervalMs ?? 600_000,
    logger,
  });
  const seen: string[] = [];
  informer.informer.on("add", (o) => seen.push(`add ${o.metadata?.name}`));
  informer.informer.on("delete", (o) => seen.push(`delete ${o.metadata?.name}`));
  running.push(informer);
  // The warnings (logRetry repeats each at debug, with the stack).
  const retries = () => lines.filter((l) => l.level === 40 && l.msg === "watch failed; restarting");
  return { informer, seen, lines, retries };
}

const createConfigMap = (name: string) =>
  cluster.core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { k: "v" } } });
const deleteConfigMap = (name: string) => cluster.core.deleteNamespacedConfigMap({ namespace, name });
const lists = () => proxy.requests.filter((r) => r.path === path && !r.watch);
const cached = (informer: ResilientInformer<V1ConfigMap>) =>
  informer.informer
    .list()
    .map((o) => o.metadata?.name)
    .sort();
/** Exactly one add of each name: none lost, none duplicated. */
const addsOf = (seen: string[], ...names: string[]) =>
  names.map((name) => seen.filter((s) => s === `add ${name}`).length);

describe("informers through a fault-injecting proxy", () => {
  it("retry failed lists with a growing delay, then fill the cache", async () => {
    await createConfigMap("before-start");
    proxy.failNextLists(path, 3);
    const { informer, seen, retries } = watchConfigMaps(proxy.kubeConfig());
    await informer.start();
    await waitUntil(
      'seen.includes("add before-start")',
      async () => (seen.includes("add before-start") ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    expect(retries().map((l) => l.retryInMs)).toEqual([500, 1000, 2000]);
    expect(retries()[0]?.error).toBe("HTTP 500: injected by the fault proxy");
    expect(
      lists()
        .slice(-4)
        .map((r) => r.status),
    ).toEqual([500, 500, 500, 200]);
    await createConfigMap("after-recovery");
    await waitUntil(
      'seen.includes("add after-recovery")',
      async () => (seen.includes("add after-recovery") ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    expect(addsOf(seen, "before-start", "after-recovery")).toEqual([1, 1]);
  });

  it("wait as long as a 429's Retry-After asks", async () => {
    proxy.throttleNextLists(path, 2, 2);
    const { informer, retries } = watchConfigMaps(proxy.kubeConfig());
    await informer.start();
    await waitUntil(
      "lists().at(-1)?.status === 200 && informer.informer.list().length > 0",
      async () => (lists().at(-1)?.status === 200 && informer.informer.list().length > 0 ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    expect(retries().map((l) => [l.code, l.retryInMs])).toEqual([
      [429, 2000],
      [429, 2000],
    ]);
  });

  it("keep every change made while a slow list was on its way", async () => {
    proxy.slowLists(path, 1_500);
    const { informer, seen } = watchConfigMaps(proxy.kubeConfig());
    const started = informer.start();
    await createConfigMap("during-slow-list");
    await started;
    proxy.slowLists(path, 0);
    await createConfigMap("after-slow-list");
    await waitUntil(
      'seen.includes("add after-slow-list") && seen.includes("add during-slow-list")',
      async () =>
        seen.includes("add after-slow-list") && seen.includes("add during-slow-list") ? true : undefined,
      { timeoutMs: clusterPatience },
    );
    expect(addsOf(seen, "during-slow-list", "after-slow-list")).toEqual([1, 1]);
  });

  it("re-list when a watch is answered 410 Gone, and restart after a dropped watch", async () => {
    const { informer, seen } = watchConfigMaps(proxy.kubeConfig());
    await informer.start();
    const listsBefore = lists().length;
    proxy.expireNextWatches(path, 1);
    proxy.dropWatches();
    await createConfigMap("after-gone");
    await deleteConfigMap("before-start");
    await waitUntil(
      'seen.includes("add after-gone") && seen.includes("delete before-start")',
      async () =>
        seen.includes("add after-gone") && seen.includes("delete before-start") ? true : undefined,
      { timeoutMs: clusterPatience },
    );
    expect(lists().length).toBeGreaterThan(listsBefore);
    expect(proxy.requests.some((r) => r.path === path && r.watch && r.status === 410)).toBe(true);
    expect(addsOf(seen, "after-gone")).toEqual([1]);
    expect(cached(informer)).not.toContain("before-start");
  });

  it("heal a stalled watch (open, silent) with the periodic re-list", async () => {
    const { informer, seen } = watchConfigMaps(proxy.kubeConfig(), { relistIntervalMs: 1_000 });
    await informer.start();
    proxy.stallWatches(true);
    try {
      await createConfigMap("while-stalled");
      await waitUntil(
        'seen.includes("add while-stalled")',
        async () => (seen.includes("add while-stalled") ? true : undefined),
        { timeoutMs: clusterPatience },
      );
    } finally {
      proxy.stallWatches(false);
    }
    const relists = await registry.getSingleMetricAsString("webhook_operator_watch_restarts_total");
    expect(relists).toContain(`resource="configmaps-${label}",reason="relist"`);
    expect(addsOf(seen, "while-stalled")).toEqual([1]);
  });

  it("bring the cache in line on relist(): what was deleted meanwhile is deleted", async () => {
    const { informer, seen, retries } = watchConfigMaps(proxy.kubeConfig());
    await informer.start();
    proxy.stallWatches(true);
    try {
      await deleteConfigMap("while-stalled");
      const listsBefore = lists().length;
      await informer.relist();
      expect(lists().length).toBe(listsBefore + 1);
    } finally {
      proxy.stallWatches(false);
    }
    // Stopping its own watch to re-list is no failure of the informer. The watch it opened again
    // delivers what happens next; a restart after a failure would have been logged before it did.
    await createConfigMap("after-relist");
    await waitUntil(
      'seen.includes("add after-relist")',
      async () => (seen.includes("add after-relist") ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    expect(retries()).toEqual([]);
    expect(seen).toContain("delete while-stalled");
    expect(cached(informer)).not.toContain("while-stalled");
  });
});

describe("informers through a real API server restart", () => {
  it("back off while it is down, and miss nothing once it is back", async () => {
    const { informer, seen, retries } = watchConfigMaps(cluster.kubeConfig());
    await informer.start();
    await cluster.stop("kube-apiserver");
    try {
      await waitUntil("retries().length >= 2", async () => (retries().length >= 2 ? true : undefined), {
        timeoutMs: clusterPatience,
      });
    } finally {
      await cluster.start("kube-apiserver");
    }
    const delays = retries().map((l) => l.retryInMs ?? 0);
    expect(delays.slice(0, 2)).toEqual([500, 1000]);
    await createConfigMap("after-restart");
    await waitUntil(
      'seen.includes("add after-restart")',
      async () => (seen.includes("add after-restart") ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    expect(addsOf(seen, "after-restart", "after-gone", "during-slow-list")).toEqual([1, 1, 1]);
  });
});

describe("an informer on a resource the cluster does not serve (a missing CRD)", () => {
  it("logs one short warning per backoff step, the stack only at debug", async () => {
    const lines: LogLine[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const customObjects = shareConnections(cluster.kubeConfig()).makeApiClient(CustomObjectsApi);
    const group = "missing.webhook-operator.io";
    const informer = resilientInformer({
      kubeConfig: shareConnections(cluster.kubeConfig()),
      path: `/apis/${group}/v1/things`,
      list: () => customObjects.listClusterCustomObject({ group, version: "v1", plural: "things" }),
      resource: "things",
      relistIntervalMs: 600_000,
      logger,
    });
    await informer.start();
    try {
      await waitUntil(
        "lines.filter((l) => l.level === 40).length >= 4",
        async () => (lines.filter((l) => l.level === 40).length >= 4 ? true : undefined),
        { timeoutMs: clusterPatience },
      );
    } finally {
      await informer.stop();
    }
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.slice(0, 4).map((l) => l.retryInMs)).toEqual([500, 1000, 2000, 4000]);
    expect(warnings[0]).toMatchObject({ resource: "things", error: "HTTP-Code: 404", code: 404 });
    for (const warning of warnings) expect(warning.err).toBeUndefined();
    expect(lines.filter((l) => l.level === 20 && l.err !== undefined).length).toBe(warnings.length);
  });
});
