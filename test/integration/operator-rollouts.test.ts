import type { V1Deployment } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deploymentFixture, type RolloutShape, rolloutStates } from "../support/deployments.js";
import {
  type FakeKubeApiServer,
  type KubeObject,
  startFakeKubeApiServer,
} from "../support/fake-kube-apiserver.js";
import { eventually, type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// Deployment rollouts → deployment.* events, end to end: the operator watches the FAKE Kubernetes API
// server through client-node; a Webhook resource subscribes a real loopback receiver; the test plays
// the Deployment controller by writing Deployment status.

let kube: FakeKubeApiServer;
let database: TestDatabase;
let receiver: Receiver;
/** Outlives the operator instances, which come and go. */
let observer: Pool;
const services: TestService[] = [];
let counter = 0;

const env = {
  LEADER_ELECTION_RETRY_PERIOD_MS: "100",
  LEADER_ELECTION_LEASE_DURATION_MS: "1000",
  DELIVERY_POLL_INTERVAL_MS: "200",
};

async function startOperator(): Promise<TestService> {
  const service = await startTestService(env, { kubeConfig: kube.kubeConfig(), database });
  services.push(service);
  return service;
}

async function stop(service: TestService): Promise<void> {
  services.splice(services.indexOf(service), 1);
  await service.close();
}

beforeAll(async () => {
  kube = await startFakeKubeApiServer();
  database = await createTestDatabase();
  observer = createPool(database.url, 2);
  receiver = await startReceiver();
  kube.create("namespaces", { metadata: { name: "shop" } });
  kube.create("webhooks", {
    apiVersion: "webhook-operator.io/v1alpha1",
    kind: "Webhook",
    metadata: { name: "all-deploys", namespace: "shop" },
    spec: {
      url: `${receiver.url}/hook`,
      events: [
        "deployment.created",
        "deployment.ready",
        "deployment.succeeded",
        "deployment.failed",
        "deployment.cancelled",
      ],
    },
  });
  const first = await startOperator();
  await eventually(async () => (first.operator?.isLeader() ? true : undefined));
  await eventually(async () => {
    const { rows } = await first.pool.query(
      "SELECT count(*)::int AS n FROM webhooks WHERE owner = 'shop/all-deploys'",
    );
    return rows[0].n === 1 ? true : undefined;
  });
});
afterAll(async () => {
  for (const service of [...services]) await service.close();
  await receiver.close();
  await kube.close();
  await observer.end();
  await database.drop();
});
afterEach(() => {
  receiver.requests.length = 0;
});

/** A new Deployment in the fake cluster, as `kubectl apply` then the Deployment controller leave it. */
function createDeployment(shape: RolloutShape = {}): { name: string } {
  counter += 1;
  const name = `web-${counter}`;
  const fixture = deploymentFixture({ ...shape, name, namespace: "shop" });
  const { status, ...object } = fixture;
  delete object.metadata?.uid;
  kube.create("deployments", object);
  if (status) setStatus(name, shape);
  return { name };
}

/** Plays the Deployment controller: the rollout's revision annotation and status. */
function setStatus(name: string, shape: RolloutShape) {
  const current = kube.get<V1Deployment & KubeObject>("deployments", { namespace: "shop", name });
  const fixture = deploymentFixture({ ...shape, generation: current?.metadata?.generation ?? 1 });
  if (
    shape.revision !== undefined ||
    !current?.metadata?.annotations?.["deployment.kubernetes.io/revision"]
  ) {
    kube.patch(
      "deployments",
      { namespace: "shop", name },
      {
        metadata: { annotations: { "deployment.kubernetes.io/revision": shape.revision ?? "1" } },
      },
    );
  }
  const generation = kube.get<V1Deployment & KubeObject>("deployments", { namespace: "shop", name })?.metadata
    ?.generation;
  kube.patchStatus(
    "deployments",
    { namespace: "shop", name },
    { ...fixture.status, observedGeneration: generation },
  );
}

/** The deployment.* events the receiver got for a Deployment, in arrival order, as "type:status". */
function received(name: string): string[] {
  return receiver.requests
    .map((r) => JSON.parse(r.body))
    .filter((e) => deploymentNames.get(e.payload.deployment_id) === name)
    .map((e) => `${e.event_type}:${e.payload.status}`);
}
const deploymentNames = new Map<number, string>();
async function refreshNames(): Promise<void> {
  const { rows } = await observer.query<{ id: number; name: string }>("SELECT id, name FROM deployments");
  for (const row of rows) deploymentNames.set(row.id, row.name);
}

async function waitForEvents(name: string, expected: string[]): Promise<void> {
  await eventually(async () => {
    await refreshNames();
    return received(name).length >= expected.length ? true : undefined;
  });
  // A little longer, to catch any duplicate that would follow.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await refreshNames();
  expect(received(name)).toEqual(expected);
}

describe("rollouts through the operator", () => {
  it("new Deployment → created, ready, succeeded", async () => {
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);
    setStatus(name, rolloutStates.ready);
    setStatus(name, rolloutStates.succeeded);
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    const list = await services[0]?.api("GET", "/projects");
    const project = list?.body.projects.find((p: { slug: string }) => p.slug === "shop");
    const deployments = await services[0]?.api("GET", `/projects/${project.id}/deployments`);
    expect(deployments?.body.deployments.find((d: { name: string }) => d.name === name)).toMatchObject({
      status: "succeeded",
    });
  });

  it("stuck rollout → created, failed", async () => {
    const { name } = createDeployment(rolloutStates.started);
    setStatus(name, rolloutStates.failed);
    await waitForEvents(name, ["deployment.created:pending", "deployment.failed:failed"]);
  });

  it("superseded by a new revision → cancelled, and the new revision starts", async () => {
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);
    kube.patch(
      "deployments",
      { namespace: "shop", name },
      { spec: { template: { metadata: { labels: { v: "2" } } } } },
    );
    setStatus(name, { ...rolloutStates.started, revision: "2" });
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.cancelled:cancelled",
      "deployment.created:pending",
    ]);
  });

  it("deleted mid-rollout → cancelled", async () => {
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);
    kube.delete("deployments", { namespace: "shop", name });
    await waitForEvents(name, ["deployment.created:pending", "deployment.cancelled:cancelled"]);
  });

  it("scale-only change → nothing", async () => {
    const { name } = createDeployment(rolloutStates.succeeded);
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    kube.patch("deployments", { namespace: "shop", name }, { spec: { replicas: 5 } });
    setStatus(name, {
      desired: 5,
      replicas: 5,
      updated: 5,
      available: 5,
      availableCondition: "True",
      progressing: { status: "True", reason: "NewReplicaSetAvailable" },
    });
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
  });

  it("keeps working after its watches expire (410) or drop", async () => {
    kube.expireWatches();
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);
    kube.dropWatchConnections();
    setStatus(name, rolloutStates.succeeded);
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
  });

  it("hands over to a second instance without duplicates or gaps, also for what happened in between", async () => {
    const first = services[0] as TestService;
    const second = await startOperator();
    // Give the second instance time to campaign: it must not lead while the first renews.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(first.operator?.isLeader()).toBe(true);
    expect(second.operator?.isLeader()).toBe(false);
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);

    await stop(first);
    // While no instance leads, the rollout becomes ready and succeeds.
    setStatus(name, rolloutStates.ready);
    setStatus(name, rolloutStates.succeeded);
    await eventually(async () => (second.operator?.isLeader() ? true : undefined), 5_000);
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    const leases = kube.list<{ spec: { holderIdentity?: string; leaseTransitions?: number } }>("leases");
    expect(leases).toHaveLength(1);
    expect(leases[0]?.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
  });

  it("an operator restarted mid-rollout emits no duplicates and no gaps", async () => {
    const { name } = createDeployment(rolloutStates.started);
    await waitForEvents(name, ["deployment.created:pending"]);
    await stop(services[0] as TestService);
    setStatus(name, rolloutStates.succeeded);
    const restarted = await startOperator();
    await eventually(async () => (restarted.operator?.isLeader() ? true : undefined), 5_000);
    await waitForEvents(name, [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
  });
});
