// Scenario B of the operator benchmark: N Deployments created at once on the real cluster, so N
// rollouts run concurrently, driven by the real Deployment controller and kwok's node (pods become
// Ready without containers). One Webhook per namespace subscribes to every deployment.* event and
// points at a loopback receiver (a child process). Every rollout must give exactly created, ready and
// succeeded at the receiver; lags run from the Deployment's create to each event's arrival.
import type { V1Deployment } from "@kubernetes/client-node";
import { revisionAnnotation, rolloutPhase } from "../src/operator/rollouts/phase.js";
import type { Cluster } from "../test/support/cluster.js";
import type { BenchDatabase } from "./database.js";
import {
  createBenchNamespaces,
  createWebhook,
  deleteBenchNamespaces,
  signingSecretRef,
  startOperatorSystem,
  waitFor,
  watchDeployments,
  watchReadiness,
} from "./operator-cluster.js";
import { measureWindow, type ProcessWindow } from "./operator-window.js";
import type { ReceiverProcess } from "./receiver-process.js";
import { percentile } from "./stats.js";

const steps = ["deployment.created", "deployment.ready", "deployment.succeeded"];

export interface LagStats {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface RolloutsResult {
  rollouts: number;
  namespaces: number;
  /** Rollouts with exactly created, ready, succeeded at the receiver — once each, nothing else. */
  complete: number;
  received: number;
  /** Deliveries of an event the receiver had already got. */
  duplicates: number;
  /** Events of other kinds (failed, cancelled). */
  unexpected: number;
  /** From the first create to the last delivery received. */
  elapsedMs: number;
  lags: Map<string, LagStats>;
  /**
   * The operator's own share: from the moment a watcher could see the Deployment status that completes
   * a step (created: the revision annotation; ready and succeeded: the phase the operator reads) to
   * the event's arrival at the receiver.
   */
  operatorLags: Map<string, LagStats>;
  window: ProcessWindow;
}

function lagStats(values: number[]): LagStats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
  };
}

const deployment = (namespace: string, name: string): V1Deployment => ({
  metadata: { name, namespace, annotations: { "webhook-operator.io/environment": "bench" } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: {
        labels: { app: name },
        annotations: { "webhook-operator.io/commit-sha": `c0ffee${name.slice(-4)}` },
      },
      spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
    },
  },
});

/**
 * One rollout per namespace, all three events delivered, before the measured ones: the operator was
 * just started on a fresh database, and its first rollouts meet what a running operator has done long
 * before (connections opened, statements prepared, the receiver's connections, code not yet optimised).
 * Without it the p99 of the operator's share was the first few rollouts of the burst: 20–60 ms
 * recording and 25–45 ms delivering, against 6 ms at p50.
 */
async function warmUp(
  cluster: Cluster,
  receiver: ReceiverProcess,
  namespaces: string[],
  timeoutMs: number,
): Promise<void> {
  await Promise.all(
    namespaces.map((namespace) =>
      cluster.apps.createNamespacedDeployment({ namespace, body: deployment(namespace, "warm-up") }),
    ),
  );
  let arrived = 0;
  await waitFor(
    `${namespaces.length * 3} warm-up deliveries`,
    async () => {
      arrived += (await receiver.collect()).ids.length;
      return arrived >= namespaces.length * 3 ? true : undefined;
    },
    timeoutMs,
    100,
  );
}

export async function runRollouts(
  database: BenchDatabase,
  cluster: Cluster,
  receiver: ReceiverProcess,
  options: { rollouts: number; namespaces: number; timeoutMs: number; env?: Record<string, string> },
): Promise<RolloutsResult> {
  const label = `bench-roll-${Date.now().toString(36)}`;
  const namespaces = await createBenchNamespaces(cluster, label, options.namespaces);
  const system = await startOperatorSystem(database, cluster, label, options.env);
  try {
    const webhooksReady = new Set<string>();
    const stopWatching = await watchReadiness(cluster, (key) => webhooksReady.add(key));
    for (const namespace of namespaces)
      await createWebhook(cluster, namespace, "all-deploys", {
        url: `${receiver.url}/hooks/${namespace}`,
        events: [...steps, "deployment.failed", "deployment.cancelled"],
        secretRef: signingSecretRef,
      });
    await waitFor(
      "the Webhooks to be Ready",
      () => (namespaces.every((ns) => webhooksReady.has(`${ns}/all-deploys`)) ? true : undefined),
      options.timeoutMs,
    );
    await stopWatching();
    await receiver.collect();
    await warmUp(cluster, receiver, namespaces, options.timeoutMs);

    const names = Array.from({ length: options.rollouts }, (_, i) => ({
      namespace: namespaces[i % namespaces.length] as string,
      name: `app-${String(i).padStart(4, "0")}`,
    }));
    const createdAt = new Map<string, number>();
    // When a watcher first saw each step's status, per rollout.
    const statusSeen = new Map<string, Map<string, number>>();
    const stopWatchingDeployments = await watchDeployments(cluster, (d) => {
      const key = `${d.metadata?.namespace}/${d.metadata?.name}`;
      const seen = statusSeen.get(key) ?? new Map<string, number>();
      statusSeen.set(key, seen);
      const now = Date.now();
      const mark = (step: string) => {
        if (!seen.has(step)) seen.set(step, now);
      };
      if (d.metadata?.annotations?.[revisionAnnotation]) mark("deployment.created");
      const { phase } = rolloutPhase(d);
      if (phase === "ready" || phase === "succeeded") mark("deployment.ready");
      if (phase === "succeeded") mark("deployment.succeeded");
    });
    const finish = await measureWindow();
    const started = Date.now();
    await Promise.all(
      names.map(async ({ namespace, name }) => {
        createdAt.set(`${namespace}/${name}`, Date.now());
        await cluster.apps.createNamespacedDeployment({ namespace, body: deployment(namespace, name) });
      }),
    );
    const arrivals = new Map<string, number[]>();
    await waitFor(
      `${names.length * 3} deliveries`,
      async () => {
        const { ids, times } = await receiver.collect();
        for (const [i, id] of ids.entries())
          arrivals.set(id, [...(arrivals.get(id) ?? []), times[i] as number]);
        return arrivals.size >= names.length * 3 ? true : undefined;
      },
      options.timeoutMs,
      100,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (${arrivals.size} arrived)`);
    });
    const window = await finish();
    await stopWatchingDeployments();
    const lastArrival = Math.max(...[...arrivals.values()].flat());

    // Which rollout and step each delivered event was, from the events the operator recorded.
    const { rows } = await system.observer.query<{ id: string; event_type: string; envelope: string }>(
      "SELECT id::text, event_type, envelope FROM events WHERE id = ANY($1::uuid[])",
      [[...arrivals.keys()]],
    );
    const byRollout = new Map<string, string[]>();
    const lags = new Map<string, number[]>(steps.map((step) => [step, []]));
    const operatorLags = new Map<string, number[]>(steps.map((step) => [step, []]));
    let unexpected = 0;
    for (const row of rows) {
      const payload = (JSON.parse(row.envelope) as { payload: { deployment_id: number; commit_sha: string } })
        .payload;
      const name = names.find((n) => `c0ffee${n.name.slice(-4)}` === payload.commit_sha);
      if (!name || !steps.includes(row.event_type)) {
        unexpected += 1;
        continue;
      }
      const key = `${name.namespace}/${name.name}`;
      byRollout.set(key, [...(byRollout.get(key) ?? []), row.event_type]);
      const arrived = arrivals.get(row.id)?.[0] ?? Number.NaN;
      lags.get(row.event_type)?.push(arrived - (createdAt.get(key) as number));
      const seen = statusSeen.get(key)?.get(row.event_type);
      if (seen !== undefined) operatorLags.get(row.event_type)?.push(arrived - seen);
    }
    const complete = names.filter(({ namespace, name }) => {
      const events = byRollout.get(`${namespace}/${name}`) ?? [];
      return events.length === 3 && steps.every((step) => events.includes(step));
    }).length;
    return {
      rollouts: names.length,
      namespaces: namespaces.length,
      complete,
      received: [...arrivals.values()].reduce((sum, times) => sum + times.length, 0),
      duplicates: [...arrivals.values()].reduce((sum, times) => sum + times.length - 1, 0),
      unexpected,
      elapsedMs: lastArrival - started,
      lags: new Map([...lags].map(([step, values]) => [step, lagStats(values)])),
      operatorLags: new Map([...operatorLags].map(([step, values]) => [step, lagStats(values)])),
      window,
    };
  } finally {
    await deleteBenchNamespaces(cluster, namespaces);
    await system.close();
  }
}
