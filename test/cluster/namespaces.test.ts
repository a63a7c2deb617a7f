import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { eventually } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { clusterPatience, createWebhook, getWebhook, readyOf } from "../support/webhook-resources.js";

// Namespaces are projects: NAMESPACE_SELECTOR chooses which, and a deleted namespace takes its
// project along (also when it was deleted while no operator ran); projects made through the API stay.

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
  for (const namespace of [payments, sandbox]) {
    await createWebhook(cluster, namespace, "hook", {
      url: "https://hooks.example.com/x",
      events: ["deployment.created"],
    });
  }
  await eventually(
    async () => ((await ready(payments))?.status === "True" ? true : undefined),
    clusterPatience,
  );
  const refused = await eventually(async () => ready(sandbox), clusterPatience);
  expect(refused).toMatchObject({ status: "False", reason: "NamespaceNotSelected" });
  expect(refused.message).toContain(`Namespace ${sandbox} is not selected`);
  expect(await slugs()).not.toContain(sandbox);

  await labelTeam(sandbox);
  await eventually(
    async () => ((await ready(sandbox))?.status === "True" ? true : undefined),
    clusterPatience,
  );
  expect(await slugs()).toEqual(expect.arrayContaining([payments, sandbox]));
});

it("removes the project of a deleted namespace, also one deleted while no operator ran, and keeps API projects", async () => {
  const apiProject = await service?.api("POST", "/projects", {
    body: { name: "Made by hand", slug: uniqueName("by-hand") },
  });
  expect(apiProject?.status).toBe(201);
  await eventually(async () => ((await slugs()).includes(temporary) ? true : undefined), clusterPatience);
  expect(await slugs()).toContain(whileDown);

  await cluster.core.deleteNamespace({ name: temporary });
  await eventually(async () => (!(await slugs()).includes(temporary) ? true : undefined), clusterPatience);

  await service?.close();
  service = undefined;
  await cluster.core.deleteNamespace({ name: whileDown });
  await eventually(async () => {
    const { items } = await cluster.core.listNamespace();
    return items.some((n) => n.metadata?.name === whileDown) ? undefined : true;
  }, clusterPatience);
  service = await startOperator();
  await eventually(async () => (!(await slugs()).includes(whileDown) ? true : undefined), clusterPatience);
  expect(await slugs()).toEqual(expect.arrayContaining([payments, sandbox, apiProject?.body.slug]));
});
