import { CoordinationV1Api, type V1LeaseSpec, V1MicroTime, Watch } from "@kubernetes/client-node";
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
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, getWebhook, waitForReady } from "../support/webhook-resources.js";

// Losing the Lease stops the controllers at once; a lease nobody renews is taken back. The Lease,
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
  await waitUntil(
    "service.operator?.isLeader()",
    async () => (service.operator?.isLeader() ? true : undefined),
    { timeoutMs: clusterPatience },
  );
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
    "service.operator?.isLeader() === false",
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
  await waitUntil(
    "service.operator?.isLeader()",
    async () => (service.operator?.isLeader() ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  await waitForReady(cluster, namespace, "while-not-leading", "True");
  const taken = await coordination().readNamespacedLease({ name: label, namespace });
  expect(taken.spec?.holderIdentity).not.toBe("someone-else");
  expect(taken.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
});
