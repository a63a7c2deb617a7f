import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookResource } from "../../src/operator/api/webhook-v1alpha1.js";
import { type FakeKubeApiServer, startFakeKubeApiServer } from "../support/fake-kube-apiserver.js";
import { eventually } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// The Webhook controller against the FAKE Kubernetes API server (test/support/fake-kube-apiserver.ts),
// through @kubernetes/client-node exactly as against a cluster, with the real service and database.

let kube: FakeKubeApiServer;
let service: TestService;

const operatorEnv = {
  LEADER_ELECTION_RETRY_PERIOD_MS: "100",
  LEADER_ELECTION_LEASE_DURATION_MS: "1000",
};

beforeAll(async () => {
  kube = await startFakeKubeApiServer();
  kube.create("namespaces", {
    metadata: { name: "team-a", annotations: { "webhook-operator.io/project-name": "Team A" } },
  });
  service = await startTestService(operatorEnv, { kubeConfig: kube.kubeConfig() });
});
afterAll(async () => {
  await service.close();
  await kube.close();
});

function webhook(name: string, spec: Record<string, unknown>) {
  return kube.create("webhooks", {
    apiVersion: "webhook-operator.io/v1alpha1",
    kind: "Webhook",
    metadata: { name, namespace: "team-a" },
    spec,
  });
}

const getWebhook = (name: string) =>
  kube.get("webhooks", { namespace: "team-a", name }) as unknown as WebhookResource | undefined;

async function readyCondition(name: string, status: "True" | "False", generation = 1) {
  return eventually(async () => {
    const resource = getWebhook(name);
    const ready = resource?.status?.conditions?.find((c) => c.type === "Ready");
    return ready?.status === status && resource?.status?.observedGeneration === generation
      ? resource
      : undefined;
  });
}

describe("Webhook resources", () => {
  it("are reconciled into the service: Ready, ids in status, finalizer, and API writes refused", async () => {
    kube.create("secrets", {
      metadata: { name: "hook-secret", namespace: "team-a" },
      stringData: { token: "s3cret-from-k8s" },
    });
    webhook("deploys", {
      url: "https://hooks.example.com/deploys",
      events: ["deployment.succeeded", "deployment.failed"],
      secretRef: { name: "hook-secret", key: "token" },
    });
    const resource = await readyCondition("deploys", "True");
    expect(resource.metadata.finalizers).toContain("webhook-operator.io/finalizer");
    expect(resource.status).toMatchObject({ hasSecret: true, observedGeneration: 1 });
    const { webhookId, projectId } = resource.status ?? {};

    const row = await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [webhookId]);
    expect(row.rows[0]).toMatchObject({
      project_id: projectId,
      url: "https://hooks.example.com/deploys",
      events: ["deployment.succeeded", "deployment.failed"],
      enabled: true,
      secret: "s3cret-from-k8s",
      owner: "team-a/deploys",
    });
    const project = await service.pool.query("SELECT name, slug FROM projects WHERE id = $1", [projectId]);
    expect(project.rows[0]).toEqual({ name: "Team A", slug: "team-a" });

    const put = await service.api("PUT", `/projects/${projectId}/webhooks/${webhookId}`, {
      body: { enabled: false },
    });
    expect(put.status).toBe(409);
    expect(put.body.error.message).toContain("team-a/deploys");

    const events = kube.list<{ reason: string; type: string; involvedObject: { name: string } }>(
      "events",
      "team-a",
    );
    expect(
      events.some(
        (e) => e.involvedObject.name === "deploys" && e.reason === "Reconciled" && e.type === "Normal",
      ),
    ).toBe(true);
  });

  it("follow spec changes and Secret changes", async () => {
    const before = await readyCondition("deploys", "True");
    kube.patch(
      "webhooks",
      { namespace: "team-a", name: "deploys" },
      { spec: { events: ["deployment.created"], enabled: false } },
    );
    await readyCondition("deploys", "True", 2);
    const row = await service.pool.query("SELECT events, enabled FROM webhooks WHERE id = $1", [
      before.status?.webhookId,
    ]);
    expect(row.rows[0]).toEqual({ events: ["deployment.created"], enabled: false });

    kube.patch(
      "secrets",
      { namespace: "team-a", name: "hook-secret" },
      { data: { token: Buffer.from("rotated").toString("base64") } },
    );
    await eventually(async () => {
      const { rows } = await service.pool.query("SELECT secret FROM webhooks WHERE id = $1", [
        before.status?.webhookId,
      ]);
      return rows[0].secret === "rotated" ? true : undefined;
    });
  });

  it("report a missing Secret or key as Ready=False with a reason and a Warning Event, then recover", async () => {
    webhook("needs-secret", {
      url: "https://hooks.example.com/x",
      events: ["deployment.created"],
      secretRef: { name: "later", key: "k" },
    });
    const missing = await readyCondition("needs-secret", "False");
    expect(missing.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "SecretNotFound",
      message: "Secret team-a/later does not exist.",
    });
    kube.create("secrets", { metadata: { name: "later", namespace: "team-a" }, stringData: { other: "x" } });
    const noKey = await eventually(async () => {
      const resource = getWebhook("needs-secret");
      const ready = resource?.status?.conditions?.find((c) => c.type === "Ready");
      return ready?.reason === "SecretKeyNotFound" ? ready : undefined;
    });
    expect(noKey.message).toBe("Secret team-a/later has no key 'k'.");
    const warnings = kube
      .list<{ reason: string; type: string }>("events", "team-a")
      .filter((e) => e.type === "Warning");
    expect(warnings.map((e) => e.reason)).toEqual(
      expect.arrayContaining(["SecretNotFound", "SecretKeyNotFound"]),
    );

    kube.patch("secrets", { namespace: "team-a", name: "later" }, { stringData: { k: "value" } });
    await readyCondition("needs-secret", "True");
  });

  it("do not loop: a Ready resource is not written again while nothing changes", async () => {
    await readyCondition("deploys", "True", 2);
    await service.operator?.idle();
    const writes = () =>
      kube.requests.filter((r) => r.method !== "GET" && r.path.includes("/webhooks/")).length;
    const before = writes();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(writes()).toBe(before);
  });

  it("delete the service's webhook through the finalizer when the resource is deleted", async () => {
    const resource = await readyCondition("deploys", "True", 2);
    kube.delete("webhooks", { namespace: "team-a", name: "deploys" });
    await eventually(async () => (getWebhook("deploys") === undefined ? true : undefined));
    const { rows } = await service.pool.query("SELECT count(*)::int AS n FROM webhooks WHERE id = $1", [
      resource.status?.webhookId,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
