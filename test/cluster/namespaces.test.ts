import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  namespaceGone,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, getWebhook, readyOf } from "../support/webhook-resources.js";

// Namespaces are projects: NAMESPACE_SELECTOR chooses which, both ways (a namespace that stops
// matching is withdrawn and comes back as it was), annotations name them, and a deleted namespace takes
// its project along (also when it was deleted while no operator ran); projects made through the API stay.

let cluster: Cluster;
let database: TestDatabase;
let service: TestService | undefined;
const label = uniqueName("namespaces");
const payments = uniqueName("payments");
const sandbox = uniqueName("sandbox");
const temporary = uniqueName("temporary");
const whileDown = uniqueName("while-down");

const startOperator = () =>
  startTestService(
    { ...operatorEnv(label), NAMESPACE_SELECTOR: `webhook-operator.io/test=${label},team=payments` },
    { kubeConfig: cluster.kubeConfig(), database },
  );
const ready = async (namespace: string) => readyOf(await getWebhook(cluster, namespace, "hook"));
async function slugs(): Promise<string[]> {
  const response = await service?.api("GET", "/projects?per_page=100");
  const projects: { slug: string }[] = response?.body.projects ?? [];
  return projects.map((p) => p.slug).sort();
}
const listed = (namespace: string, wanted: boolean) =>
  waitUntil(
    `project ${namespace} to be ${wanted ? "listed" : "gone"}`,
    async (saw) => {
      const listedNow = await slugs();
      saw(listedNow);
      return listedNow.includes(namespace) === wanted ? true : undefined;
    },
    { timeoutMs: clusterPatience },
  );
const labelTeam = (namespace: string) =>
  cluster.kubectl(["label", "namespace", namespace, "team=payments", "--overwrite"]);

beforeAll(async () => {
  cluster = useCluster();
  database = await createTestDatabase();
  await createNamespaces(cluster, label, payments, sandbox, temporary, whileDown);
  for (const namespace of [payments, temporary, whileDown]) await labelTeam(namespace);
  service = await startOperator();
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await database?.drop();
});

it("reconciles Webhooks only in selected namespaces, and picks up a namespace once it is labelled", async () => {
  // With a cluster, the service says its projects are namespaces (the dashboard words itself by it).
  expect((await service?.api("GET", "/service-info"))?.body).toMatchObject({ kubernetes: true });
  for (const namespace of [payments, sandbox]) {
    await createWebhook(cluster, namespace, "hook", {
      url: "https://hooks.example.com/x",
      events: ["deployment.created"],
    });
  }
  await waitUntil(
    '(await ready(payments))?.status === "True"',
    async () => ((await ready(payments))?.status === "True" ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  const refused = await waitUntil("the sandbox Webhook's Ready condition", async () => ready(sandbox), {
    timeoutMs: clusterPatience,
  });
  expect(refused).toMatchObject({ status: "False", reason: "NamespaceNotSelected" });
  expect(refused.message).toContain(`Namespace ${sandbox} is not selected`);
  expect(await slugs()).not.toContain(sandbox);

  await labelTeam(sandbox);
  await waitUntil(
    '(await ready(sandbox))?.status === "True"',
    async () => ((await ready(sandbox))?.status === "True" ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  expect(await slugs()).toEqual(expect.arrayContaining([payments, sandbox]));
});

it("removes the project of a deleted namespace, also one deleted while no operator ran, and keeps API projects", async () => {
  const apiProject = await service?.api("POST", "/projects", {
    body: { name: "Made by hand", slug: uniqueName("by-hand") },
  });
  expect(apiProject?.status).toBe(201);
  await listed(temporary, true);
  expect(await slugs()).toContain(whileDown);

  await cluster.core.deleteNamespace({ name: temporary });
  await namespaceGone(cluster, temporary);
  await listed(temporary, false);

  await service?.close();
  service = undefined;
  await cluster.core.deleteNamespace({ name: whileDown });
  await namespaceGone(cluster, whileDown);
  service = await startOperator();
  await listed(whileDown, false);
  expect(await slugs()).toEqual(expect.arrayContaining([payments, sandbox, apiProject?.body.slug]));
});

async function projectOf(namespace: string): Promise<{ id: number; name: string; repo_url: string | null }> {
  const response = await service?.api("GET", "/projects?per_page=100");
  return response?.body.projects.find((p: { slug: string }) => p.slug === namespace);
}

it("withdraws the project of a namespace that loses its label, and brings it back as it was", async () => {
  const project = await projectOf(payments);
  const webhookId = (await getWebhook(cluster, payments, "hook"))?.status?.webhookId;
  expect(webhookId).toEqual(expect.any(Number));

  await cluster.kubectl(["label", "namespace", payments, "team-"]);
  await listed(payments, false);
  const hidden = await service?.api("GET", `/projects/${project.id}/webhooks`);
  expect(hidden?.status).toBe(404);
  await waitUntil(
    '(await ready(payments))?.reason === "NamespaceNotSelected"',
    async () => ((await ready(payments))?.reason === "NamespaceNotSelected" ? true : undefined),
    { timeoutMs: clusterPatience },
  );

  await labelTeam(payments);
  await waitUntil(
    '(await ready(payments))?.status === "True"',
    async () => ((await ready(payments))?.status === "True" ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  expect((await projectOf(payments)).id).toBe(project.id);
  expect((await getWebhook(cluster, payments, "hook"))?.status?.webhookId).toBe(webhookId);
  const webhooks = await service?.api("GET", `/projects/${project.id}/webhooks`);
  expect(webhooks?.body.map((w: { id: number }) => w.id)).toEqual([webhookId]);
});

it("withdraws, as it starts, the projects of namespaces that only an earlier selector chose", async () => {
  const earlier = uniqueName("earlier");
  await createNamespaces(cluster, label, earlier);
  await service?.close();
  // The same operator, earlier, with a wider selector: every namespace of this file is a project.
  service = await startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });
  await listed(earlier, true);
  await service.close();
  service = await startOperator();
  await listed(earlier, false);
  expect(await slugs()).toContain(payments);
});

it("follows the project-name and repo-url annotations, and goes back to the defaults when they are removed", async () => {
  const name = "webhook-operator.io/project-name";
  const repo = "webhook-operator.io/repo-url";
  await cluster.kubectl([
    "annotate",
    "namespace",
    payments,
    `${name}=Payments`,
    `${repo}=https://git.example.com/pay`,
  ]);
  await waitUntil(
    '(await projectOf(payments)).name === "Payments"',
    async () => ((await projectOf(payments)).name === "Payments" ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  expect(await projectOf(payments)).toMatchObject({ repo_url: "https://git.example.com/pay" });

  await cluster.kubectl(["annotate", "namespace", payments, `${name}-`, `${repo}-`]);
  await waitUntil(
    "(await projectOf(payments)).name === payments",
    async () => ((await projectOf(payments)).name === payments ? true : undefined),
    { timeoutMs: clusterPatience },
  );
  expect(await projectOf(payments)).toMatchObject({ name: payments, repo_url: null });
});
