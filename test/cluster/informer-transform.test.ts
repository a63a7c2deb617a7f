import { AppsV1Api, type V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { lastAppliedAnnotation, slimWorkload } from "../../src/operator/cache-transforms.js";
import { type ResilientInformer, resilientInformer } from "../../src/operator/informer.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience } from "../support/webhook-resources.js";

// What an informer's cache keeps of objects that `kubectl apply` made (src/operator/cache-transforms.ts),
// through a list and through the watch, and which of its events came from the watch (the rollout
// controller queues those ahead of a list's backlog).

let cluster: Cluster;
let informer: ResilientInformer<V1Deployment> | undefined;
const label = uniqueName("transforms");
const namespace = uniqueName("slim");

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
});
afterAll(async () => {
  await informer?.stop();
  await deleteNamespaces(cluster, label);
});

const applied = (name: string, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${namespace}, annotations: {webhook-operator.io/branch: main}}
spec:
  replicas: 0
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}, annotations: {webhook-operator.io/commit-sha: abc123}}
    spec:
      containers:
        - name: app
          image: ${image}
          env: [{name: MODE, value: production}]
          ports: [{containerPort: 8080}]
`;

it("keeps only what is read of listed and watched objects, and says which events the watch delivered", async () => {
  await cluster.kubectl(["apply", "-f", "-"], applied("listed", "registry.example/listed:1"));
  const kubeConfig = cluster.kubeConfig();
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const running = resilientInformer<V1Deployment>({
    kubeConfig,
    path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
    list: () => apps.listNamespacedDeployment({ namespace }),
    resource: `deployments-${label}`,
    relistIntervalMs: 600_000,
    logger: createLogger("silent"),
    transform: slimWorkload,
  });
  informer = running;
  const events: string[] = [];
  const record = (verb: string) => (deployment: V1Deployment) =>
    events.push(`${verb} ${deployment.metadata?.name} ${running.fromWatch() ? "watch" : "list"}`);
  running.informer.on("add", record("add"));
  running.informer.on("update", record("update"));
  await running.start();

  await cluster.kubectl(["apply", "-f", "-"], applied("watched", "registry.example/watched:1"));
  const watched = await waitUntil(
    "the watched Deployment in the cache",
    async () => running.informer.get("watched", namespace),
    { timeoutMs: clusterPatience },
  );
  const listed = running.informer.get("listed", namespace);
  expect(events).toContain("add listed list");
  expect(events).toContain("add watched watch");
  expect(events.filter((event) => event.endsWith(" list"))).toEqual(["add listed list"]);

  for (const [deployment, image] of [
    [listed, "registry.example/listed:1"],
    [watched, "registry.example/watched:1"],
  ] as const) {
    // The API server gave them both (kubectl apply and the controllers' status updates).
    expect(deployment?.metadata?.managedFields).toBeUndefined();
    expect(deployment?.metadata?.annotations?.[lastAppliedAnnotation]).toBeUndefined();
    expect(deployment?.metadata?.annotations?.["webhook-operator.io/branch"]).toBe("main");
    expect(deployment?.metadata?.uid).toBeTruthy();
    expect(deployment?.spec?.template?.metadata?.annotations).toEqual({
      "webhook-operator.io/commit-sha": "abc123",
    });
    expect(deployment?.spec?.template?.spec?.containers).toEqual([{ name: "app", image }]);
  }
  const whole = await apps.readNamespacedDeployment({ namespace, name: "watched" });
  expect(whole.metadata?.managedFields?.length).toBeGreaterThan(0);
  expect(whole.metadata?.annotations?.[lastAppliedAnnotation]).toBeDefined();
});
