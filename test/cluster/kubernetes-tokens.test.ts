import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, waitForReady } from "../support/webhook-resources.js";

// ServiceAccount tokens on /api against the real API server: TokenReview and SubjectAccessReview are
// Kubernetes' own, and so are the roles, taken from manifests/install.yaml as users apply them.

let cluster: Cluster;
let service: TestService;
const label = uniqueName("tokens");
const shop = uniqueName("shop");
const other = uniqueName("other");
const audience = "webhook-operator";
const ids = { shop: { project: 0, webhook: 0 }, other: { project: 0, webhook: 0 } };

/** The example ClusterRoles the chart ships, applied from the rendered install manifest. */
async function applyTokenRoles(): Promise<void> {
  const manifest = readFileSync(path.join(repoRoot, "manifests/install.yaml"), "utf8");
  const roles = parseAllDocuments(manifest)
    .map((document) => document.toJS())
    .filter(
      (object) =>
        object?.kind === "ClusterRole" && /-(read-deliveries|manage-webhooks)$/.test(object.metadata.name),
    );
  expect(roles.map((role) => role.metadata.name).sort()).toEqual([
    "webhook-operator-manage-webhooks",
    "webhook-operator-read-deliveries",
  ]);
  await cluster.kubectl(["apply", "-f", "-"], roles.map((role) => JSON.stringify(role)).join("\n"));
}

async function serviceAccount(name: string, clusterRole?: string): Promise<void> {
  await cluster.kubectl(["-n", shop, "create", "serviceaccount", name]);
  if (clusterRole) {
    await cluster.kubectl([
      "-n",
      shop,
      "create",
      "rolebinding",
      name,
      `--clusterrole=${clusterRole}`,
      `--serviceaccount=${shop}:${name}`,
    ]);
  }
}

async function tokenOf(name: string, tokenAudience: string | null = audience): Promise<string> {
  const args = ["-n", shop, "create", "token", name];
  if (tokenAudience) args.push("--audience", tokenAudience);
  return (await cluster.kubectl(args)).trim();
}

const webhooksOf = (project: number) => `/projects/${project}/webhooks`;

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, shop, other);
  await applyTokenRoles();
  service = await startTestService(
    {
      NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
      LEADER_ELECTION_LEASE_NAME: label,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
      KUBERNETES_TOKEN_CACHE_TTL_MS: "1000",
    },
    { kubeConfig: cluster.kubeConfig() },
  );
  for (const [key, namespace] of [
    ["shop", shop],
    ["other", other],
  ] as const) {
    await createWebhook(cluster, namespace, "deploys", {
      url: "https://hooks.example.com/deploys",
      events: ["deployment.succeeded"],
    });
    const status = (await waitForReady(cluster, namespace, "deploys", "True")).status;
    ids[key] = { project: Number(status?.projectId), webhook: Number(status?.webhookId) };
  }
  await serviceAccount("reader", "webhook-operator-read-deliveries");
  await serviceAccount("manager", "webhook-operator-manage-webhooks");
  await serviceAccount("nobody");
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
});

describe("Kubernetes tokens on /api", () => {
  it("read-only binding: reads shop, sees only shop, is refused writes, and another project is not found", async () => {
    const key = await tokenOf("reader");
    const list = await service.api("GET", webhooksOf(ids.shop.project), { key });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain(`"id":${ids.shop.webhook}`);
    const one = await service.api("GET", `${webhooksOf(ids.shop.project)}/${ids.shop.webhook}`, { key });
    expect(one.status).toBe(200);

    const projects = await service.api("GET", "/projects", { key });
    expect(projects.status).toBe(200);
    expect((projects.body as { projects: { id: number }[] }).projects.map((p) => p.id)).toEqual([
      ids.shop.project,
    ]);

    expect((await service.api("GET", webhooksOf(ids.other.project), { key })).status).toBe(404);
    const write = await service.api("POST", webhooksOf(ids.shop.project), {
      key,
      body: { url: "https://hooks.example.com/new", events: ["deployment.succeeded"] },
    });
    expect(write.status).toBe(403);
    expect(write.text).toContain(`system:serviceaccount:${shop}:reader may not create webhooks`);
    const test = await service.api("POST", `${webhooksOf(ids.shop.project)}/${ids.shop.webhook}/test`, {
      key,
      body: {},
    });
    expect(test.status).toBe(403);
    expect(test.text).toContain("webhooks/test");
    expect((await service.api("POST", "/projects", { key, body: { name: "x", slug: "x" } })).status).toBe(
      403,
    );
  });

  it("manage binding: creates, tests, replays and deletes webhooks in shop; read-only cannot replay", async () => {
    const key = await tokenOf("manager");
    const receiver = await startReceiver();
    try {
      const created = await service.api("POST", webhooksOf(ids.shop.project), {
        key,
        body: { url: `${receiver.url}/hook`, events: ["deployment.succeeded"] },
      });
      expect(created.status).toBe(201);
      const webhook = `${webhooksOf(ids.shop.project)}/${(created.body as { id: number }).id}`;
      const test = await service.api("POST", `${webhook}/test`, { key, body: {} });
      expect(test.status).toBe(200);
      await receiver.waitFor(1);
      const retry = `${webhook}/deliveries/${(test.body as { delivery_id: number }).delivery_id}/retry`;
      const reader = await service.api("POST", retry, { key: await tokenOf("reader") });
      expect(reader.status).toBe(403);
      expect(reader.text).toContain("webhooks/replay");
      expect((await service.api("POST", retry, { key })).status).toBe(200);
      await receiver.waitFor(2);
      expect((await service.api("DELETE", webhook, { key })).status).toBe(204);
    } finally {
      await receiver.close();
    }
    expect((await service.api("GET", webhooksOf(ids.other.project), { key })).status).toBe(404);
  });

  it("no binding: 403 with what to grant", async () => {
    const response = await service.api("GET", webhooksOf(ids.shop.project), { key: await tokenOf("nobody") });
    expect(response.status).toBe(403);
    expect(response.text).toContain("RoleBinding");
  });

  it("a token for another audience, or of a deleted ServiceAccount: 401", async () => {
    const wrongAudience = await service.api("GET", webhooksOf(ids.shop.project), {
      key: await tokenOf("reader", null),
    });
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.text).toContain(`--audience ${audience}`);

    await serviceAccount("short-lived", "webhook-operator-read-deliveries");
    const key = await tokenOf("short-lived");
    expect((await service.api("GET", webhooksOf(ids.shop.project), { key })).status).toBe(200);
    await cluster.kubectl(["-n", shop, "delete", "serviceaccount", "short-lived"]);
    // The cache may answer for at most its TTL (1 s here); then the API server's verdict holds.
    await waitUntil(
      "response.status === 401",
      async () => {
        const response = await service.api("GET", webhooksOf(ids.shop.project), { key });
        return response.status === 401 ? response : undefined;
      },
      { timeoutMs: clusterPatience },
    );
  });

  it("a revoked RoleBinding stops working once the cache's TTL has passed", async () => {
    await serviceAccount("revoked", "webhook-operator-manage-webhooks");
    const key = await tokenOf("revoked");
    expect((await service.api("GET", webhooksOf(ids.shop.project), { key })).status).toBe(200);
    await cluster.kubectl(["-n", shop, "delete", "rolebinding", "revoked"]);
    const refused = await waitUntil(
      "not (response.status === 200)",
      async () => {
        const response = await service.api("GET", webhooksOf(ids.shop.project), { key });
        return response.status === 200 ? undefined : response;
      },
      { timeoutMs: clusterPatience },
    );
    expect(refused.status).toBe(403);
  });

  it("counts authentications by method and outcome", async () => {
    const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /webhook_operator_api_authentications_total\{method="kubernetes_token",outcome="success"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /webhook_operator_api_authentications_total\{method="kubernetes_token",outcome="rejected"\} [1-9]/,
    );
  });

  it("the API server stopped: 503 with a clear message; started again: tokens work again", async () => {
    const key = await tokenOf("reader");
    await cluster.stop("kube-apiserver");
    try {
      const response = await service.api("GET", webhooksOf(ids.shop.project), { key });
      expect(response.status).toBe(503);
      expect(response.text).toContain("Kubernetes API server did not answer");
      // API keys do not depend on the API server.
      expect((await service.api("GET", webhooksOf(ids.shop.project))).status).toBe(200);
    } finally {
      await cluster.start("kube-apiserver");
    }
    await waitUntil(
      "response.status === 200",
      async () => {
        const response = await service.api("GET", webhooksOf(ids.shop.project), { key });
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: clusterPatience },
    );
  });
});
