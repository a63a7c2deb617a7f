import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { type Cluster, uniqueName } from "../support/cluster.js";
import { operatorRules, serviceAccountIdentity } from "../support/cluster-identities.js";
import {
  deploymentManifest,
  openGate,
  operatorEnv,
  type RolloutTestBed,
  rolloutLedger,
  rolloutTestBed,
} from "../support/cluster-rollouts.js";
import type { TestDatabase } from "../support/database.js";
import type { Receiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, waitForReady } from "../support/webhook-resources.js";

// Deployment rollouts → deployment.* events, driven by the REAL Deployment controller: pods on the
// kwok node become Ready (or stay Pending behind a gate), conditions and revisions are Kubernetes' own.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
let service: TestService | undefined;
let ledger: ReturnType<typeof rolloutLedger>;
const label = uniqueName("rollouts");
const namespace = uniqueName("shop");
const full = ["deployment.created:pending", "deployment.ready:ready", "deployment.succeeded:succeeded"];

const startOperator = () =>
  startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });

let bed: RolloutTestBed | undefined;
beforeAll(async () => {
  bed = await rolloutTestBed(label, namespace);
  ({ cluster, database, observer, receiver } = bed);
  ledger = rolloutLedger(observer, receiver);
  service = await startOperator();
  await waitForReady(cluster, namespace, "all-deploys", "True");
});
afterAll(async () => {
  await service?.close();
  await bed?.close();
});

const create = (name: string, options: Parameters<typeof deploymentManifest>[1] = {}) =>
  cluster.apps.createNamespacedDeployment({ namespace, body: deploymentManifest(name, options) });
const patchDeployment = (name: string, patch: object) =>
  cluster.kubectl([
    "-n",
    namespace,
    "patch",
    "deployment",
    name,
    "--type",
    "merge",
    "-p",
    JSON.stringify(patch),
  ]);

describe("rollouts on a real cluster", () => {
  it("new Deployment → created, ready, succeeded, and the deployment list shows it", async () => {
    await create("web");
    await ledger.waitFor("web", full);
    const projects = await service?.api("GET", "/projects");
    const project = projects?.body.projects.find((p: { slug: string }) => p.slug === namespace);
    const deployments = await service?.api("GET", `/projects/${project.id}/deployments`);
    expect(deployments?.body.deployments.find((d: { name: string }) => d.name === "web")).toMatchObject({
      status: "succeeded",
    });
  });

  it("pods that never schedule → created, then failed at the progress deadline", async () => {
    await create("stuck", { gate: uniqueName("never"), progressDeadlineSeconds: 2 });
    await ledger.waitFor("stuck", ["deployment.created:pending", "deployment.failed:failed"]);
    const envelope = receiver.requests
      .map((r) => JSON.parse(r.body))
      .find((e) => e.event_type === "deployment.failed");
    expect(envelope.payload.error_message).toMatch(/progress/i);
  });

  it("superseded by a new revision → cancelled, and the new revision rolls out", async () => {
    await create("superseded", {
      gate: uniqueName("held"),
      annotations: { "webhook-operator.io/url": "https://shop.example" },
    });
    await ledger.waitFor("superseded", ["deployment.created:pending"]);
    // The new revision drops the gate: its pods schedule, and revision 1 never finishes.
    await patchDeployment("superseded", { spec: { template: { spec: { nodeSelector: null } } } });
    await ledger.waitFor("superseded", ["deployment.created:pending", "deployment.cancelled:cancelled"]);
    await ledger.waitFor("superseded", full, "2");
    // Revision 1 never went live: its cancellation carries no url; revision 2's success does.
    const urls = Object.fromEntries(
      receiver.requests
        .map((r) => JSON.parse(r.body))
        .filter((e) => ["deployment.cancelled", "deployment.succeeded"].includes(e.event_type))
        .map((e) => [e.event_type, e.payload.url]),
    );
    expect(urls).toMatchObject({
      "deployment.cancelled": null,
      "deployment.succeeded": "https://shop.example",
    });
  });

  it("times of a burst of rollouts: whole seconds, started_at ≤ finished_at, the same in every event and in the API", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `burst-${i}`);
    await Promise.all(names.map((name) => create(name, { replicas: 1 })));
    for (const name of names) await ledger.waitFor(name, full);
    const { rows } = await observer.query<{ id: number; name: string; project_id: number }>(
      "SELECT id, name, project_id FROM deployments WHERE name = ANY($1)",
      [names],
    );
    const listed = await service?.api("GET", `/projects/${rows[0]?.project_id}/deployments?per_page=100`);
    const wholeSecond = expect.stringMatching(/T\d\d:\d\d:\d\d\.000Z$/);
    for (const row of rows) {
      const payloads = receiver.requests
        .map((r) => JSON.parse(r.body).payload)
        .filter((payload) => payload.deployment_id === row.id);
      const succeeded = payloads.find((payload) => payload.status === "succeeded");
      expect(succeeded, row.name).toMatchObject({ started_at: wholeSecond, finished_at: wholeSecond });
      expect(Date.parse(succeeded.finished_at), row.name).toBeGreaterThanOrEqual(
        Date.parse(succeeded.started_at),
      );
      expect(new Set(payloads.map((payload) => payload.started_at))).toEqual(new Set([succeeded.started_at]));
      expect(listed?.body.deployments.find((d: { id: number }) => d.id === row.id)).toMatchObject({
        started_at: succeeded.started_at,
        finished_at: succeeded.finished_at,
      });
    }
  });

  it("deleted mid-rollout → cancelled", async () => {
    await create("deleted", { gate: uniqueName("held") });
    await ledger.waitFor("deleted", ["deployment.created:pending"]);
    await cluster.apps.deleteNamespacedDeployment({ namespace, name: "deleted" });
    await ledger.waitFor("deleted", ["deployment.created:pending", "deployment.cancelled:cancelled"]);
  });

  it("scale-only change → nothing", async () => {
    await create("scaled", { replicas: 1 });
    await ledger.waitFor("scaled", full);
    await patchDeployment("scaled", { spec: { replicas: 3 } });
    await waitUntil(
      "d.status?.availableReplicas === 3",
      async () => {
        const d = await cluster.apps.readNamespacedDeployment({ namespace, name: "scaled" });
        return d.status?.availableReplicas === 3 ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    await service?.operator?.idle();
    await ledger.waitFor("scaled", full);
  });

  it("an operator restarted mid-rollout emits what happened meanwhile, each once, with Kubernetes' own times", async () => {
    const gate = uniqueName("restart");
    await create("restarted", { gate });
    await ledger.waitFor("restarted", ["deployment.created:pending"]);
    await service?.close();
    service = undefined;
    await openGate(cluster, gate);
    // A whole rollout happens while no operator runs.
    await create("while-down", { replicas: 1 });
    const available = async (name: string, replicas: number) =>
      waitUntil(
        "d.status?.availableReplicas === replicas && d.status.updatedReplicas === replicas",
        async () => {
          const d = await cluster.apps.readNamespacedDeployment({ namespace, name });
          return d.status?.availableReplicas === replicas && d.status.updatedReplicas === replicas
            ? d
            : undefined;
        },
        { timeoutMs: clusterPatience },
      );
    await available("restarted", 2);
    const whileDown = await available("while-down", 1);
    const restartedAt = new Date();
    service = await startOperator();
    await ledger.waitFor("restarted", full);
    await ledger.waitFor("while-down", full);
    // Its times are the ReplicaSet's creation and the Deployment controller's conclusion, not the
    // moment the operator came back (Kubernetes keeps whole seconds).
    const { items } = await cluster.apps.listNamespacedReplicaSet({
      namespace,
      labelSelector: "app=while-down",
    });
    const { rows } = await observer.query(
      "SELECT started_at, finished_at FROM deployments WHERE name = 'while-down'",
    );
    expect(rows[0].started_at.getTime()).toBe(new Date(items[0]?.metadata?.creationTimestamp ?? 0).getTime());
    const progressing = whileDown.status?.conditions?.find((c) => c.type === "Progressing");
    expect(rows[0].finished_at.getTime()).toBe(new Date(progressing?.lastUpdateTime ?? 0).getTime());
    expect(rows[0].finished_at.getTime()).toBeLessThan(restartedAt.getTime());
  });

  it("failed at the deadline, then completed after all → succeeded follows failed", async () => {
    const gate = uniqueName("late");
    await create("late", { gate, progressDeadlineSeconds: 2 });
    await ledger.waitFor("late", ["deployment.created:pending", "deployment.failed:failed"]);
    await openGate(cluster, gate);
    await ledger.waitFor("late", [
      "deployment.created:pending",
      "deployment.failed:failed",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    const { rows } = await observer.query(
      "SELECT status, error_message FROM deployments WHERE name = 'late'",
    );
    expect(rows[0]).toEqual({ status: "succeeded", error_message: null });
  });

  it("a leader whose first list of Deployments fails cancels nothing, and catches up once it can list", async () => {
    const gate = uniqueName("list");
    await create("unlisted", { gate });
    await ledger.waitFor("unlisted", ["deployment.created:pending"]);
    await service?.close();
    // The new leader may watch Deployments but not list them: its first list answers 403.
    const withoutList = operatorRules.map((rule) =>
      rule.resources?.includes("deployments") ? { ...rule, verbs: ["watch"] } : rule,
    );
    const identity = await serviceAccountIdentity(cluster, {
      namespace,
      name: "operator",
      rules: withoutList,
    });
    try {
      service = await startTestService(operatorEnv(label), { kubeConfig: identity.kubeConfig(), database });
      await waitUntil(
        "service?.operator?.isLeader()",
        async () => (service?.operator?.isLeader() ? true : undefined),
        { timeoutMs: clusterPatience },
      );
      await service.operator?.idle();
      // Its controllers have started (and would have cancelled at start-up): the rollout is untouched.
      const { rows } = await observer.query("SELECT status FROM deployments WHERE name = 'unlisted'");
      expect(rows[0].status).toBe("pending");

      await identity.setRules(operatorRules);
      await openGate(cluster, gate);
      await ledger.waitFor("unlisted", full);
    } finally {
      await identity.remove();
    }
  });
});
