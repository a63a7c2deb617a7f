import { CoordinationV1Api, type V1LeaseSpec, V1MicroTime, Watch } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { metrics, registry } from "../../src/metrics.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase } from "../support/database.js";
import { startFaultProxy } from "../support/fault-proxy.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, getWebhook, waitForReady } from "../support/webhook-resources.js";

// Losing the Lease stops the controllers at once; a lease nobody renews is taken back; two replicas
// never lead at once, through a hand-over and through a leader cut off from the API server. The Lease,
// its resourceVersion and the watches are the real API server's.

let cluster: Cluster;
let service: TestService;
const label = uniqueName("leader");
const namespace = uniqueName("team");

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
  service = await startTestService(
    { ...operatorEnv(label), POD_NAMESPACE: namespace },
    { kubeConfig: cluster.kubeConfig() },
  );
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
});

const coordination = () => cluster.kubeConfig().makeApiClient(CoordinationV1Api);

/** Writes the Lease as another holder would: read, changed, replaced (again if the operator wrote between). */
async function writeLease(change: (spec: V1LeaseSpec) => V1LeaseSpec): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const lease = await coordination().readNamespacedLease({ name: label, namespace });
    lease.spec = change(lease.spec ?? {});
    const written = await coordination()
      .replaceNamespacedLease({ name: label, namespace, body: lease })
      .then(
        () => true,
        (error: { code?: number }) => {
          if (error.code !== 409 || attempt === 5) throw error;
          return false;
        },
      );
    if (written) return;
  }
}

/** Reconciles of Webhook resources this process has made so far (any result). */
async function webhookReconciles(): Promise<number> {
  const { values } = await metrics.reconciles.get();
  return values.filter((v) => v.labels.controller === "webhook").reduce((sum, v) => sum + v.value, 0);
}

/** Creates a resource and resolves once a watch of the namespace's Webhooks, opened before, delivers it. */
async function creationWatched(name: string, create: () => Promise<unknown>): Promise<void> {
  const listed = (await cluster.customObjects.listNamespacedCustomObject({
    group: "webhook-operator.io",
    version: "v1alpha1",
    plural: "webhooks",
    namespace,
  })) as { metadata: { resourceVersion: string } };
  let watching: AbortController | undefined;
  const seen = new Promise<void>((resolve, reject) => {
    new Watch(cluster.kubeConfig())
      .watch(
        `/apis/webhook-operator.io/v1alpha1/namespaces/${namespace}/webhooks`,
        { resourceVersion: listed.metadata.resourceVersion },
        (phase, object) => {
          if (phase === "ADDED" && object.metadata?.name === name) resolve();
        },
        (error) => {
          if (error) reject(error);
        },
      )
      .then((controller) => {
        watching = controller;
      }, reject);
  });
  try {
    await create();
    await seen;
  } finally {
    watching?.abort();
  }
}

it("stops the controllers when the Lease is taken, and takes it back once nobody renews it", async () => {
  await waitUntil("the operator to lead", async () => (service.operator?.isLeader() ? true : undefined), {
    timeoutMs: clusterPatience,
  });
  expect(await registry.getSingleMetricAsString("webhook_operator_leader")).toContain(
    "webhook_operator_leader 1",
  );

  // Another holder takes the Lease (what a leader cut off from the API server finds when it is back),
  // for longer than the test lasts: the operator cannot lead again until that is shortened below.
  await writeLease((spec) => ({
    ...spec,
    holderIdentity: "someone-else",
    renewTime: new V1MicroTime(),
    leaseDurationSeconds: 3600,
  }));
  await waitUntil(
    "the operator to stop leading",
    async () => (service.operator?.isLeader() === false ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  await service.operator?.idle();

  // Its controllers are stopped: a Webhook created now is not reconciled, although the watch event that
  // makes a running controller reconcile it has reached watchers, and the operator has nothing queued …
  const reconciled = await webhookReconciles();
  await creationWatched("while-not-leading", () =>
    createWebhook(cluster, namespace, "while-not-leading", {
      url: "https://hooks.example.com/x",
      events: ["deployment.created"],
    }),
  );
  await service.operator?.idle();
  expect(service.operator?.isLeader()).toBe(false);
  expect((await getWebhook(cluster, namespace, "while-not-leading"))?.status).toBeUndefined();
  expect(await webhookReconciles()).toBe(reconciled);

  // … until "someone-else" shortens its Lease to 3 s and never renews it: once it has not changed for
  // that long, the operator takes it and leads again.
  await writeLease((spec) => ({ ...spec, renewTime: new V1MicroTime(), leaseDurationSeconds: 3 }));
  await waitUntil("the operator to lead", async () => (service.operator?.isLeader() ? true : undefined), {
    timeoutMs: clusterPatience,
  });
  await waitForReady(cluster, namespace, "while-not-leading", "True");
  const taken = await coordination().readNamespacedLease({ name: label, namespace });
  expect(taken.spec?.holderIdentity).not.toBe("someone-else");
  expect(taken.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
});

/** One replica's leadership changes, as its elector logs them ("became leader", "stopped leading"). */
interface Transition {
  replica: string;
  leading: boolean;
}

/**
 * A logger for a replica that notes its leadership changes, in the one order they happened: both
 * replicas run in this process, so the log writes of the two are totally ordered.
 */
function leadershipLog(replica: string, transitions: Transition[]) {
  return pino(
    { level: "info" },
    {
      write(line: string) {
        const { msg } = JSON.parse(line) as { msg: string };
        if (msg === "became leader" || msg === "stopped leading")
          transitions.push({ replica, leading: msg === "became leader" });
      },
    },
  );
}

/** The most replicas leading at the same moment, walking the changes in order. */
function mostLeadersAtOnce(transitions: Transition[]): number {
  const leading = new Set<string>();
  let most = 0;
  for (const { replica, leading: now } of transitions) {
    if (now) leading.add(replica);
    else leading.delete(replica);
    most = Math.max(most, leading.size);
  }
  return most;
}

it("never lets two replicas lead at once: not when one hands over, nor when the leader is cut off", async () => {
  // A Lease of its own, and a namespace selector no namespace matches: only the election runs.
  const pair = uniqueName("pair");
  const env = { ...operatorEnv(pair), POD_NAMESPACE: namespace, LEADER_ELECTION_LEASE_DURATION_MS: "2000" };
  const database = await createTestDatabase();
  const proxy = await startFaultProxy(cluster);
  const transitions: Transition[] = [];
  const isLeading = (replica: string) => transitions.findLast((t) => t.replica === replica)?.leading === true;
  // "cut" reaches the API server through the fault proxy, "direct" without.
  const cut = await startTestService(env, {
    kubeConfig: proxy.kubeConfig(),
    database,
    logger: leadershipLog("cut", transitions),
  });
  let direct: TestService | undefined;
  try {
    await waitUntil("the first replica to lead", async () => (isLeading("cut") ? true : undefined), {
      timeoutMs: clusterPatience,
    });
    direct = await startTestService(env, {
      kubeConfig: cluster.kubeConfig(),
      database,
      logger: leadershipLog("direct", transitions),
    });

    // The leader's Lease requests go unanswered: it steps down by its renew deadline (two thirds of
    // the lease), and only once the Lease has not changed for a whole lease does the other take it.
    proxy.cutOff(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`);
    await waitUntil("the other replica to lead", async () => (isLeading("direct") ? true : undefined), {
      timeoutMs: clusterPatience,
    });
    proxy.cutOff(undefined);

    // The new leader stops and hands the Lease over: released, it is taken at once, still by one.
    await direct.close();
    direct = undefined;
    await waitUntil("the first replica to lead again", async () => (isLeading("cut") ? true : undefined), {
      timeoutMs: clusterPatience,
    });
  } finally {
    await direct?.close();
    await cut.close();
    await proxy.close();
    await database.drop();
  }
  expect(transitions).toEqual([
    { replica: "cut", leading: true },
    { replica: "cut", leading: false },
    { replica: "direct", leading: true },
    { replica: "direct", leading: false },
    { replica: "cut", leading: true },
    { replica: "cut", leading: false },
  ]);
  expect(mostLeadersAtOnce(transitions)).toBe(1);
});
