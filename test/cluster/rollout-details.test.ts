import type { V1PodTemplateSpec } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { allDeploymentEvents, operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, waitForReady } from "../support/webhook-resources.js";

// What changed, on a real control plane: a Deployment's, a StatefulSet's and a DaemonSet's image
// change, rolled out by their real controllers, arrive at a Webhook resource with rolloutDetails as
// old → new images, read from the ReplicaSets and ControllerRevisions the operator caches, with the
// version label and the configured links; a Webhook without it gets bodies without the key.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
let service: TestService | undefined;
const label = uniqueName("rollout-details");
const namespace = uniqueName("shop");
const links = [
  { name: "Grafana", url: "https://grafana.example/d/x?ns={namespace}&w={name}&k={kind}&r={revision}" },
];

beforeAll(async () => {
  cluster = useCluster();
  database = await createTestDatabase();
  observer = createPool(database.url, 2);
  receiver = await startReceiver();
  await createNamespaces(cluster, label, namespace);
  service = await startTestService(
    { ...operatorEnv(label), ROLLOUT_LINKS: JSON.stringify(links) },
    { kubeConfig: cluster.kubeConfig(), database },
  );
  await createWebhook(cluster, namespace, "detailed", {
    url: `${receiver.url}/detailed`,
    events: allDeploymentEvents,
    rolloutDetails: true,
  });
  await createWebhook(cluster, namespace, "plain", {
    url: `${receiver.url}/plain`,
    events: allDeploymentEvents,
  });
  await waitForReady(cluster, namespace, "detailed", "True");
  await waitForReady(cluster, namespace, "plain", "True");
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await receiver?.close();
  await observer?.end();
  await database?.drop();
});

// biome-ignore lint/suspicious/noExplicitAny: the bodies as receivers parse them
type Body = any;
const bodiesAt = (path: string): Body[] =>
  receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body));

/**
 * The succeeded event of the workload's `revision` at the opted-in receiver, once it arrived. Given
 * up, it says what the cluster and the receiver held then: whether the rollout or the operator stopped.
 */
const succeeded = (name: string, revision: string) =>
  waitUntil(
    `deployment.succeeded of ${name} revision ${revision} with rollout details`,
    async () =>
      bodiesAt("/detailed").find(
        (b) =>
          b.event_type === "deployment.succeeded" &&
          b.payload.rollout?.workload.name === name &&
          b.payload.rollout.workload.revision === revision,
      ),
    { timeoutMs: clusterPatience },
  ).catch(async (error: Error) => {
    const state = await cluster
      .kubectl([
        "-n",
        namespace,
        "get",
        "deployments,statefulsets,daemonsets,controllerrevisions,pods",
        "-o",
        "wide",
      ])
      .catch((e: Error) => e.message);
    const events = bodiesAt("/detailed")
      .filter((b) => b.payload.rollout?.workload.name === name)
      .map((b) => `${b.event_type}@${b.payload.rollout.workload.revision}`);
    throw new Error(
      `${error.message}\nthe cluster then:\n${state}\n${name}'s events received: ${events.join(", ")}`,
    );
  });

function template(name: string, version: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: name, "app.kubernetes.io/version": version } },
    spec: {
      initContainers: [{ name: "migrate", image: "registry.example/migrate:1" }],
      containers: [{ name: "app", image: `registry.example/${name}:${version}` }],
    },
  };
}

/** The new image and version: a new revision of the workload. */
const newImage = (resource: string, name: string, version: string) =>
  cluster.kubectl([
    "-n",
    namespace,
    "patch",
    resource,
    name,
    "--type",
    "strategic",
    "-p",
    JSON.stringify({ spec: { template: template(name, version) } }),
  ]);

const images = (name: string, before: string | null) => [
  {
    container: "migrate",
    init: true,
    before: before && "registry.example/migrate:1",
    after: "registry.example/migrate:1",
  },
  {
    container: "app",
    init: false,
    before: before && `registry.example/${name}:${before}`,
    after: `registry.example/${name}:2`,
  },
];

describe("rollout details on a real cluster", () => {
  it("a Deployment's image change arrives as old → new images, with the version label and the links", async () => {
    await cluster.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: { replicas: 2, selector: { matchLabels: { app: "web" } }, template: template("web", "1") },
      },
    });
    const first = await succeeded("web", "1");
    expect(first.payload.rollout.changes.previous_revision).toBeNull();
    expect(first.payload.rollout.changes.images.map((i: Body) => i.before)).toEqual([null, null]);

    await newImage("deployment", "web", "2");
    const second = await succeeded("web", "2");
    expect(second.payload.rollout).toEqual({
      workload: { kind: "Deployment", name: "web", namespace, revision: "2" },
      changes: {
        images: images("web", "1"),
        previous_revision: "1",
        change_cause: null,
        commit_sha: null,
        branch: null,
        metadata: { "app.kubernetes.io/version": "2" },
      },
      links: [
        {
          name: "Grafana",
          url: `https://grafana.example/d/x?ns=${namespace}&w=web&k=Deployment&r=2`,
        },
      ],
    });
    // Every event of the rollout carries them; the webhook without the setting gets none of them.
    const created = bodiesAt("/detailed").find(
      (b) =>
        b.event_type === "deployment.created" &&
        b.payload.rollout?.workload.revision === "2" &&
        b.payload.rollout.workload.name === "web",
    );
    expect(created?.payload.rollout.changes.images).toEqual(second.payload.rollout.changes.images);
    const plain = await waitUntil(
      "the plain webhook's copy of the same event",
      async () => bodiesAt("/plain").find((b) => b.id === second.id),
      { timeoutMs: clusterPatience },
    );
    const { rollout: _rollout, ...payload } = second.payload;
    expect(plain.payload).toEqual(payload);
    for (const body of bodiesAt("/plain")) expect(body.payload).not.toHaveProperty("rollout");
  });

  it("a StatefulSet's image change arrives as old → new images, from its ControllerRevisions", async () => {
    await cluster.apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: "db" },
        spec: {
          replicas: 1,
          serviceName: "db",
          selector: { matchLabels: { app: "db" } },
          template: template("db", "1"),
        },
      },
    });
    await succeeded("db", "1");
    await newImage("statefulset", "db", "2");
    const second = await succeeded("db", "2");
    expect(second.payload.rollout.workload).toEqual({
      kind: "StatefulSet",
      name: "db",
      namespace,
      revision: "2",
    });
    expect(second.payload.rollout.changes).toMatchObject({
      images: images("db", "1"),
      previous_revision: "1",
    });
  });

  it("a DaemonSet's image change arrives as old → new images, from its ControllerRevisions", async () => {
    await cluster.apps.createNamespacedDaemonSet({
      namespace,
      body: {
        metadata: { name: "agent" },
        spec: { selector: { matchLabels: { app: "agent" } }, template: template("agent", "1") },
      },
    });
    await succeeded("agent", "1");
    await newImage("daemonset", "agent", "2");
    const second = await succeeded("agent", "2");
    expect(second.payload.rollout.workload).toMatchObject({
      kind: "DaemonSet",
      name: "agent",
      revision: "2",
    });
    expect(second.payload.rollout.changes).toMatchObject({
      images: images("agent", "1"),
      previous_revision: "1",
    });
  });
});
