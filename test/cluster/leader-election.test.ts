import { CoordinationV1Api, V1MicroTime } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { registry } from "../../src/metrics.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { operatorEnv } from "../support/cluster-rollouts.js";
import { eventually } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
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

it("stops the controllers when the Lease is taken, and takes it back once nobody renews it", async () => {
  await eventually(async () => (service.operator?.isLeader() ? true : undefined), clusterPatience);
  expect(await registry.getSingleMetricAsString("webhook_operator_leader")).toContain(
    "webhook_operator_leader 1",
  );

  // Another holder writes the Lease (what a leader cut off from the API server finds when it is back).
  // Read and written again when the operator renewed it in between (409 Conflict), as any writer must.
  const coordination = cluster.kubeConfig().makeApiClient(CoordinationV1Api);
  for (let attempt = 1; ; attempt++) {
    const lease = await coordination.readNamespacedLease({ name: label, namespace });
    lease.spec = {
      ...lease.spec,
      holderIdentity: "someone-else",
      renewTime: new V1MicroTime(),
      leaseDurationSeconds: 3,
    };
    const written = await coordination.replaceNamespacedLease({ name: label, namespace, body: lease }).then(
      () => true,
      (error: { code?: number }) => {
        if (error.code !== 409 || attempt === 5) throw error;
        return false;
      },
    );
    if (written) break;
  }
  await eventually(async () => (service.operator?.isLeader() === false ? true : undefined), clusterPatience);
  await service.operator?.idle();

  // Its controllers are stopped: a Webhook created now is not reconciled …
  await createWebhook(cluster, namespace, "while-not-leading", {
    url: "https://hooks.example.com/x",
    events: ["deployment.created"],
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  if (!service.operator?.isLeader())
    expect((await getWebhook(cluster, namespace, "while-not-leading"))?.status).toBeUndefined();

  // … until "someone-else", who never renews, has let the Lease expire and the operator leads again.
  await eventually(async () => (service.operator?.isLeader() ? true : undefined), clusterPatience);
  await waitForReady(cluster, namespace, "while-not-leading", "True");
  const taken = await coordination.readNamespacedLease({ name: label, namespace });
  expect(taken.spec?.holderIdentity).not.toBe("someone-else");
  expect(taken.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
});
