import { afterAll, beforeAll, expect, it } from "vitest";
import type { WebhookResource } from "../../src/operator/api/webhook-v1alpha1.js";
import { type FakeKubeApiServer, startFakeKubeApiServer } from "../support/fake-kube-apiserver.js";
import { eventually } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// NAMESPACE_SELECTOR against the FAKE Kubernetes API server: only selected namespaces are projects, a
// Webhook elsewhere says why it is not Ready, and labelling its namespace brings it in.

let kube: FakeKubeApiServer;
let service: TestService;

beforeAll(async () => {
  kube = await startFakeKubeApiServer();
  kube.create("namespaces", { metadata: { name: "payments", labels: { team: "payments" } } });
  kube.create("namespaces", { metadata: { name: "sandbox" } });
  service = await startTestService(
    { NAMESPACE_SELECTOR: "team=payments", LEADER_ELECTION_RETRY_PERIOD_MS: "100" },
    { kubeConfig: kube.kubeConfig() },
  );
});
afterAll(async () => {
  await service.close();
  await kube.close();
});

const ready = (namespace: string) => {
  const resource = kube.get("webhooks", { namespace, name: "hook" }) as unknown as
    | WebhookResource
    | undefined;
  return resource?.status?.conditions?.find((c) => c.type === "Ready");
};

it("reconciles Webhooks only in selected namespaces, and picks up a namespace once it is labelled", async () => {
  for (const namespace of ["payments", "sandbox"]) {
    kube.create("webhooks", {
      apiVersion: "webhook-operator.io/v1alpha1",
      kind: "Webhook",
      metadata: { name: "hook", namespace },
      spec: { url: "https://hooks.example.com/x", events: ["deployment.created"] },
    });
  }
  await eventually(async () => (ready("payments")?.status === "True" ? true : undefined));
  const refused = await eventually(async () => ready("sandbox"));
  expect(refused).toMatchObject({ status: "False", reason: "NamespaceNotSelected" });
  expect(refused.message).toContain("Namespace sandbox is not selected");
  const { rows } = await service.pool.query("SELECT slug FROM projects ORDER BY slug");
  expect(rows.map((row) => row.slug)).toEqual(["payments"]);

  kube.patch("namespaces", { name: "sandbox" }, { metadata: { labels: { team: "payments" } } });
  await eventually(async () => (ready("sandbox")?.status === "True" ? true : undefined));
  const after = await service.pool.query("SELECT slug FROM projects ORDER BY slug");
  expect(after.rows.map((row) => row.slug)).toEqual(["payments", "sandbox"]);
});
