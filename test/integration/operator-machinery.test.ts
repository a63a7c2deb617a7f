import { AppsV1Api, CoordinationV1Api, type V1Deployment, V1MicroTime } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { registry } from "../../src/metrics.js";
import { resilientInformer } from "../../src/operator/informer.js";
import { deploymentFixture } from "../support/deployments.js";
import { type FakeKubeApiServer, startFakeKubeApiServer } from "../support/fake-kube-apiserver.js";
import { eventually } from "../support/receiver.js";
import { startTestService } from "../support/service.js";

// Controller machinery against the FAKE Kubernetes API server: informer restarts and re-lists, and
// losing the leader lease.

let kube: FakeKubeApiServer;

beforeAll(async () => {
  kube = await startFakeKubeApiServer();
  kube.create("namespaces", { metadata: { name: "shop" } });
});
afterAll(() => kube.close());

function createDeployment(name: string) {
  const { status: _status, ...object } = deploymentFixture({ name, namespace: "shop" });
  delete object.metadata?.uid;
  kube.create("deployments", object);
}

describe("resilientInformer", () => {
  it("restarts after its watch connection drops, and a re-list brings the cache in line", async () => {
    const apps = kube.kubeConfig().makeApiClient(AppsV1Api);
    const informer = resilientInformer<V1Deployment>({
      kubeConfig: kube.kubeConfig(),
      path: "/apis/apps/v1/deployments",
      list: () => apps.listDeploymentForAllNamespaces(),
      resource: "deployments-test",
      relistIntervalMs: 60_000,
      logger: createLogger("silent"),
    });
    const seen: string[] = [];
    informer.informer.on("add", (d) => seen.push(`add ${d.metadata?.name}`));
    informer.informer.on("delete", (d) => seen.push(`delete ${d.metadata?.name}`));
    createDeployment("before-start");
    await informer.start();
    expect(seen).toEqual(["add before-start"]);

    kube.dropWatchConnections();
    createDeployment("after-drop");
    await eventually(async () => (seen.includes("add after-drop") ? true : undefined), 5_000);
    const restarts = await registry.getSingleMetricAsString("webhook_operator_watch_restarts_total");
    expect(restarts).toContain('resource="deployments-test",reason="error"');

    const listsBefore = kube.requests.filter(
      (r) => r.path === "/apis/apps/v1/deployments" && !r.watch,
    ).length;
    kube.delete("deployments", { namespace: "shop", name: "before-start" });
    await informer.relist();
    const listsAfter = kube.requests.filter((r) => r.path === "/apis/apps/v1/deployments" && !r.watch).length;
    expect(listsAfter).toBe(listsBefore + 1);
    await eventually(async () => (seen.includes("delete before-start") ? true : undefined));
    expect(informer.informer.list().map((d) => d.metadata?.name)).toEqual(["after-drop"]);
    await informer.stop();
  });
});

describe("leader election", () => {
  it("stops the controllers promptly when the lease is lost, and takes it back once it expires", async () => {
    const service = await startTestService(
      {
        LEADER_ELECTION_RETRY_PERIOD_MS: "100",
        LEADER_ELECTION_LEASE_DURATION_MS: "1000",
        POD_NAMESPACE: "default",
      },
      { kubeConfig: kube.kubeConfig() },
    );
    try {
      await eventually(async () => (service.operator?.isLeader() ? true : undefined));
      const leader = await registry.getSingleMetricAsString("webhook_operator_leader");
      expect(leader).toContain("webhook_operator_leader 1");

      // Another holder renews the lease (as a partitioned-away leader would see after losing it).
      const coordination = kube.kubeConfig().makeApiClient(CoordinationV1Api);
      const lease = await coordination.readNamespacedLease({
        name: "webhook-operator-leader",
        namespace: "default",
      });
      lease.spec = {
        ...lease.spec,
        holderIdentity: "someone-else",
        renewTime: new V1MicroTime(),
        leaseDurationSeconds: 1,
      };
      await coordination.replaceNamespacedLease({
        name: "webhook-operator-leader",
        namespace: "default",
        body: lease,
      });
      const lostAt = Date.now();
      await eventually(async () => (service.operator?.isLeader() === false ? true : undefined), 2_000);
      expect(Date.now() - lostAt).toBeLessThan(1_000);
      await service.operator?.idle();
      // Its informers are stopped: the fake server sees every watch of the controller closed.
      await eventually(async () => (kube.openWatches().length === 0 ? true : undefined), 1_000);

      // "someone-else" never renews: after the lease duration the service leads again.
      await eventually(async () => (service.operator?.isLeader() ? true : undefined), 5_000);
    } finally {
      await service.close();
    }
  });
});
