import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { V1DaemonSet, V1PodTemplateSpec, V1StatefulSet } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { type Cluster, uniqueName } from "../support/cluster.js";
import { operatorRules, serviceAccountIdentity } from "../support/cluster-identities.js";
import {
  gateSelector,
  operatorEnv,
  type RolloutTestBed,
  rolloutLedger,
  rolloutTestBed,
} from "../support/cluster-rollouts.js";
import type { TestDatabase } from "../support/database.js";
import { startOperatorProcess, waitForLog } from "../support/operator-process.js";
import type { Receiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, waitForReady } from "../support/webhook-resources.js";

// StatefulSet and DaemonSet rollouts → deployment.* events, driven by the REAL StatefulSet and
// DaemonSet controllers: their pods on the kwok node become Ready (or never schedule), their status,
// ControllerRevisions and template generations are Kubernetes' own.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
let service: TestService | undefined;
let ledger: ReturnType<typeof rolloutLedger>;
const label = uniqueName("kinds");
const namespace = uniqueName("infra");
const full = ["deployment.created:pending", "deployment.ready:ready", "deployment.succeeded:succeeded"];
const failed = ["deployment.created:pending", "deployment.failed:failed"];

let bed: RolloutTestBed | undefined;
beforeAll(async () => {
  bed = await rolloutTestBed(label, namespace);
  ({ cluster, database, observer, receiver } = bed);
  ledger = rolloutLedger(observer, receiver);
  service = await startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });
  await waitForReady(cluster, namespace, "all-deploys", "True");
});
afterAll(async () => {
  await service?.close();
  await bed?.close();
});

interface WorkloadOptions {
  replicas?: number;
  /** Pods select a node label no node has: they never schedule (cluster-rollouts.ts). */
  gate?: string;
  /** Pods ask for more CPU than the node has: created, never scheduled. */
  tooBig?: boolean;
  deadlineSeconds?: number;
  partition?: number;
  onDelete?: boolean;
}

function podTemplate(name: string, options: WorkloadOptions, commit = "c1"): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: name }, annotations: { "webhook-operator.io/commit-sha": commit } },
    spec: {
      nodeSelector: options.gate ? gateSelector(options.gate) : undefined,
      containers: [
        {
          name: "app",
          image: "registry.example/app:1",
          resources: options.tooBig ? { requests: { cpu: "1000" } } : undefined,
        },
      ],
    },
  };
}

const deadline = (options: WorkloadOptions) =>
  options.deadlineSeconds === undefined
    ? undefined
    : { "webhook-operator.io/progress-deadline-seconds": String(options.deadlineSeconds) };

const statefulSet = (name: string, options: WorkloadOptions = {}): V1StatefulSet => ({
  metadata: { name, annotations: deadline(options) },
  spec: {
    replicas: options.replicas ?? 2,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: podTemplate(name, options),
    updateStrategy: options.onDelete
      ? { type: "OnDelete" }
      : { type: "RollingUpdate", rollingUpdate: { partition: options.partition } },
  },
});

const daemonSet = (name: string, options: WorkloadOptions = {}): V1DaemonSet => ({
  metadata: { name, annotations: deadline(options) },
  spec: {
    selector: { matchLabels: { app: name } },
    template: podTemplate(name, options),
    updateStrategy: options.onDelete ? { type: "OnDelete" } : { type: "RollingUpdate" },
  },
});

/** A new pod template (a new commit): a new rollout of the workload. */
const roll = (kind: "statefulset" | "daemonset", name: string, commit: string) =>
  cluster.kubectl([
    "-n",
    namespace,
    "patch",
    kind,
    name,
    "--type",
    "merge",
    "-p",
    JSON.stringify({
      spec: { template: { metadata: { annotations: { "webhook-operator.io/commit-sha": commit } } } },
    }),
  ]);

const payloadsOf = async (name: string) => {
  const { rows } = await observer.query<{ id: number }>("SELECT id FROM deployments WHERE name = $1", [name]);
  const ids = new Set(rows.map((row) => row.id));
  return receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => ids.has(e.payload.deployment_id));
};

describe("StatefulSet rollouts on a real cluster", () => {
  it("created → ready → succeeded, then a new template is a new rollout (revision 2)", async () => {
    await cluster.apps.createNamespacedStatefulSet({ namespace, body: statefulSet("db") });
    await ledger.waitFor("db", full);
    await roll("statefulset", "db", "c2");
    await ledger.waitFor("db", full, "2");
    const envelopes = await payloadsOf("db");
    const succeeded = envelopes.find(
      (e) => e.event_type === "deployment.succeeded" && e.payload.commit_sha === "c2",
    );
    // Nothing routes to its pods: its url is the StatefulSet's own address in the Kubernetes API.
    expect(succeeded.payload).toMatchObject({
      status: "succeeded",
      error_message: null,
      url: `https://kubernetes.default.svc/apis/apps/v1/namespaces/${namespace}/statefulsets/db`,
    });
    const created = envelopes.find(
      (e) => e.event_type === "deployment.created" && e.payload.commit_sha === "c2",
    );
    expect(created.payload).toMatchObject({ status: "pending", url: null, finished_at: null });
    // The deployments API says which workload it was, when asked.
    const project = created.project_id;
    const listed = await service?.api(
      "GET",
      `/projects/${project}/deployments?include=workload&per_page=100`,
    );
    expect(listed?.body.deployments.filter((d: { name: string }) => d.name === "db")).toEqual([
      expect.objectContaining({ workload_kind: "StatefulSet", workload_name: "db", status: "succeeded" }),
      expect.objectContaining({ workload_kind: "StatefulSet", workload_name: "db", status: "succeeded" }),
    ]);
  });

  it("a rollback (kubectl rollout undo) is a new rollout: the old ControllerRevision gets the next number", async () => {
    await cluster.kubectl(["-n", namespace, "rollout", "undo", "statefulset/db"]);
    await ledger.waitFor("db", full, "3");
    const { rows } = await observer.query(
      "SELECT revision, commit_sha FROM deployments WHERE name = 'db' ORDER BY id",
    );
    expect(rows).toEqual([
      { revision: "1", commit_sha: "c1" },
      { revision: "2", commit_sha: "c2" },
      { revision: "3", commit_sha: "c1" },
    ]);
  });

  it("an operator restarted after a whole rollout emits it, dated by its ControllerRevision", async () => {
    await service?.close();
    service = undefined;
    await cluster.apps.createNamespacedStatefulSet({ namespace, body: statefulSet("while-down") });
    await waitUntil(
      "StatefulSet while-down to have 2 available, updated replicas",
      async () => {
        const sts = await cluster.apps.readNamespacedStatefulSet({ namespace, name: "while-down" });
        return sts.status?.availableReplicas === 2 && sts.status.updatedReplicas === 2 ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    service = await startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });
    await ledger.waitFor("while-down", full);
    const { items } = await cluster.apps.listNamespacedControllerRevision({
      namespace,
      labelSelector: "app=while-down",
    });
    const { rows } = await observer.query("SELECT started_at FROM deployments WHERE name = 'while-down'");
    expect(rows[0].started_at.getTime()).toBe(new Date(items[0]?.metadata?.creationTimestamp ?? 0).getTime());
  });

  it("pods that never schedule → created, then failed at its progress deadline annotation", async () => {
    await cluster.apps.createNamespacedStatefulSet({
      namespace,
      body: statefulSet("stuck-db", { gate: uniqueName("never"), deadlineSeconds: 3 }),
    });
    await ledger.waitFor("stuck-db", failed);
    const failure = (await payloadsOf("stuck-db")).find((e) => e.event_type === "deployment.failed");
    expect(failure.payload.error_message).toMatch(/^StatefulSet "stuck-db" made no progress for 3 seconds/);
    expect(failure.payload.url).toBeNull();
  });

  it("a partitioned rollout succeeds when the pods at or above the partition are updated", async () => {
    await cluster.apps.createNamespacedStatefulSet({
      namespace,
      body: statefulSet("canary", { partition: 1 }),
    });
    await ledger.waitFor("canary", full);
    await roll("statefulset", "canary", "c2");
    await ledger.waitFor("canary", full, "2");
    const status = (await cluster.apps.readNamespacedStatefulSet({ namespace, name: "canary" })).status;
    // Pod 0, below the partition, still runs the old revision.
    expect(status?.updatedReplicas).toBe(1);
    expect(status?.currentRevision).not.toBe(status?.updateRevision);
  });

  it("OnDelete: created at the change, ready and succeeded once the pods were deleted and came back", async () => {
    await cluster.apps.createNamespacedStatefulSet({
      namespace,
      body: statefulSet("manual", { onDelete: true }),
    });
    await ledger.waitFor("manual", full);
    await roll("statefulset", "manual", "c2");
    await ledger.waitFor("manual", ["deployment.created:pending"], "2");
    await cluster.kubectl(["-n", namespace, "delete", "pod", "-l", "app=manual", "--wait=false"]);
    await ledger.waitFor("manual", full, "2");
  });
});

describe("DaemonSet rollouts on a real cluster", () => {
  it("created → ready → succeeded; a new template, and a rollback, are new rollouts (template generations 2, 3)", async () => {
    await cluster.apps.createNamespacedDaemonSet({ namespace, body: daemonSet("agent") });
    await ledger.waitFor("agent", full);
    await roll("daemonset", "agent", "c2");
    await ledger.waitFor("agent", full, "2");
    await cluster.kubectl(["-n", namespace, "rollout", "undo", "daemonset/agent"]);
    await ledger.waitFor("agent", full, "3");
  });

  it("a pod that is never scheduled → created, then failed at its progress deadline annotation", async () => {
    await cluster.apps.createNamespacedDaemonSet({
      namespace,
      body: daemonSet("stuck-agent", { tooBig: true, deadlineSeconds: 3 }),
    });
    await ledger.waitFor("stuck-agent", failed);
    const failure = (await payloadsOf("stuck-agent")).find((e) => e.event_type === "deployment.failed");
    expect(failure.payload.error_message).toMatch(
      /^DaemonSet "stuck-agent" made no progress for 3 seconds.*: [01] of 1 nodes updated, 0 of 1 available\.$/,
    );
  });

  it("deleted mid-rollout → cancelled", async () => {
    await cluster.apps.createNamespacedDaemonSet({ namespace, body: daemonSet("gone", { tooBig: true }) });
    await ledger.waitFor("gone", ["deployment.created:pending"]);
    await cluster.apps.deleteNamespacedDaemonSet({ namespace, name: "gone" });
    await ledger.waitFor("gone", ["deployment.created:pending", "deployment.cancelled:cancelled"]);
  });
});

describe("which kinds are watched", () => {
  it("a kind the operator may not list is skipped with a clear warning; the others still fire", async () => {
    await service?.close();
    service = undefined;
    const withoutDaemonSets = operatorRules.map((rule) =>
      rule.resources?.includes("daemonsets")
        ? { ...rule, resources: rule.resources.filter((resource) => resource !== "daemonsets") }
        : rule,
    );
    const identity = await serviceAccountIdentity(cluster, {
      namespace,
      name: "no-daemonsets",
      rules: withoutDaemonSets,
    });
    const kubeconfig = path.join(tmpdir(), `${uniqueName("kubeconfig")}.json`);
    await writeFile(kubeconfig, identity.kubeConfig().exportConfig(), { mode: 0o600 });
    const operator = await startOperatorProcess({
      ...operatorEnv(label),
      DATABASE_URL: database.url,
      KUBECONFIG: kubeconfig,
      KUBERNETES: "true",
      API_KEY: "process-test-key-0123456789",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "true",
      LOG_LEVEL: "info",
    });
    try {
      await waitForLog(operator, "controllers started", 1, clusterPatience);
      const warnings = operator
        .log()
        .split("\n")
        .filter((line) => line.includes("rollouts are not watched"));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] ?? "{}")).toMatchObject({
        level: 40, // pino's warn
        kind: "DaemonSet",
        resource: "daemonsets.apps",
        msg: expect.stringContaining("Grant list and watch on daemonsets.apps"),
      });
      // No retry loop: the informer of the forbidden kind never started.
      expect(operator.logged("watch failed; restarting")).toEqual([]);
      await cluster.apps.createNamespacedStatefulSet({ namespace, body: statefulSet("still-watched") });
      await ledger.waitFor("still-watched", full);
      await cluster.apps.createNamespacedDaemonSet({ namespace, body: daemonSet("unwatched") });
      await waitUntil(
        "DaemonSet unwatched to have a pod available",
        async () => {
          const ds = await cluster.apps.readNamespacedDaemonSet({ namespace, name: "unwatched" });
          return ds.status?.numberAvailable === 1 ? true : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      const { rows } = await observer.query("SELECT id FROM deployments WHERE name = 'unwatched'");
      expect(rows).toEqual([]);
    } finally {
      await operator.stop();
      await identity.remove();
    }
  });

  it("WATCH_WORKLOAD_KINDS=Deployment leaves StatefulSets alone", async () => {
    service = await startTestService(
      { ...operatorEnv(label), WATCH_WORKLOAD_KINDS: "Deployment" },
      { kubeConfig: cluster.kubeConfig(), database },
    );
    await waitUntil("the operator to lead", async () => (service?.operator?.isLeader() ? true : undefined), {
      timeoutMs: clusterPatience,
    });
    await cluster.apps.createNamespacedStatefulSet({ namespace, body: statefulSet("ignored") });
    await waitUntil(
      "StatefulSet ignored to have 2 available replicas",
      async () => {
        const sts = await cluster.apps.readNamespacedStatefulSet({ namespace, name: "ignored" });
        return sts.status?.availableReplicas === 2 ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    await service.operator?.idle();
    const { rows } = await observer.query("SELECT id FROM deployments WHERE name = 'ignored'");
    expect(rows).toEqual([]);
  });
});
