import { createHmac } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CoordinationV1Api } from "@kubernetes/client-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChartRelease,
  chartEnvironment,
  chartRelease,
  clusterValues,
  installChart,
  serviceAccountKubeconfig,
} from "../support/chart-release.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type OperatorProcess, startOperatorProcess } from "../support/operator-process.js";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, eventsOf, getWebhook, waitForReady } from "../support/webhook-resources.js";

// The quick start's story on this suite's simulated node (test/node runs it on a real one): the chart
// installed with helm, the operator built in dist/ run outside the cluster (no container runs on the kwok node) as
// the chart's ServiceAccount, the examples of manifests/examples applied (the Webhook pointed at a
// receiver on loopback instead of the example receiver Deployment), the example Deployment rolled out
// twice: created, ready and succeeded of each rollout arrive exactly once, signed. The operator meets
// no 403 in any of it: every call it makes is one the chart's RBAC grants.

const label = uniqueName("e2e");
const namespace = uniqueName("demo");
const signingSecret = "demo-signing-secret-change-me";
const adminKey = "e2e-admin-key-0123456789";
const secondCommit = label.replace(/\W/g, "").slice(0, 12);

let cluster: Cluster;
let chart: ChartRelease;
let database: TestDatabase;
let pool: pg.Pool;
let receiver: Receiver;
let operator: OperatorProcess;
let workDir: string;

/** An example manifest with its namespace renamed to this file's and the receiver URL replaced. */
async function example(file: string): Promise<string> {
  const text = await readFile(path.join(repoRoot, "manifests/examples", file), "utf8");
  return text
    .replace(/^(\s*)(name|namespace): demo$/gm, `$1$2: ${namespace}`)
    .replace(/url: http:\/\/webhook-receiver\S+/, `url: ${receiver.url}/hooks`);
}

const deliveriesOf = (commit: string) =>
  receiver.requests.filter((r) => JSON.parse(r.body).payload.commit_sha === commit);

async function rolloutDeliveries(commit: string): Promise<ReceivedRequest[]> {
  const wanted = ["deployment.created", "deployment.ready", "deployment.succeeded"];
  await waitUntil(
    "wanted.every((event) => events.has(event))",
    async () => {
      const events = new Set(deliveriesOf(commit).map((r) => r.headers["x-webhook-event"]));
      return wanted.every((event) => events.has(event)) ? true : undefined;
    },
    { timeoutMs: 3 * clusterPatience },
  );
  // The outbox empty and every delivery it made received: a duplicate, had one been made, is here.
  await waitUntil(
    "rows[0].open === 0 && rows[0].made === receiver.requests.length",
    async () => {
      const { rows } = await pool.query(
        "SELECT count(*) FILTER (WHERE state <> 'done')::int AS open, count(*)::int AS made FROM deliveries",
      );
      return rows[0].open === 0 && rows[0].made === receiver.requests.length ? true : undefined;
    },
    { timeoutMs: clusterPatience },
  );
  return deliveriesOf(commit);
}

function expectOneSignedRollout(requests: ReceivedRequest[], commit: string) {
  expect(requests.map((r) => r.headers["x-webhook-event"]).sort()).toEqual([
    "deployment.created",
    "deployment.ready",
    "deployment.succeeded",
  ]);
  for (const request of requests) {
    const timestamp = String(request.headers["x-webhook-timestamp"]);
    const expected = `sha256=${createHmac("sha256", signingSecret).update(`${timestamp}.${request.body}`).digest("hex")}`;
    expect(request.headers["x-webhook-signature"]).toBe(expected);
  }
  const bodies = requests.map((r) => JSON.parse(r.body));
  expect(new Set(bodies.map((b) => b.id)).size).toBe(3);
  expect(new Set(bodies.map((b) => b.payload.deployment_id)).size).toBe(1);
  for (const body of bodies)
    expect(body.payload).toMatchObject({
      project_name: "Demo shop",
      environment: "staging",
      commit_sha: commit,
    });
  const byEvent = (event: string) => bodies.find((b) => b.event_type === event)?.payload;
  expect(byEvent("deployment.created")).toMatchObject({ status: "pending", url: null });
  expect(byEvent("deployment.ready")).toMatchObject({ status: "ready" });
  expect(byEvent("deployment.succeeded")).toMatchObject({
    status: "succeeded",
    url: "https://staging.shop.example.com",
  });
}

beforeAll(async () => {
  cluster = useCluster();
  workDir = await mkdtemp(path.join(tmpdir(), "wo-e2e-"));
  chart = chartRelease(cluster, uniqueName("wo"), uniqueName("e2e-operator"));
  // Private destinations are refused by default in a cluster install; the receiver here is on
  // loopback, so the admin allows it, as the README shows for in-cluster receivers.
  await installChart(chart, { ...clusterValues, "config.delivery.allowedDestinations": "{127.0.0.1/32}" });
  [database, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  await createNamespaces(cluster, label, namespace);
  operator = await startOperatorProcess({
    ...(await chartEnvironment(cluster, chart)),
    DATABASE_URL: database.url,
    API_KEY: adminKey,
    // Every line, so that a refusal logged at any level is seen.
    LOG_LEVEL: "debug",
    KUBECONFIG: await serviceAccountKubeconfig(cluster, chart, workDir),
    // This file's namespaces only: other files' leftovers stay out of its way.
    NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
  });
});
afterAll(async () => {
  const code = await operator?.stop();
  if (code !== 0) console.log(`operator exited with ${code}; its log:\n${operator?.log()}`);
  await receiver?.close();
  await pool?.end();
  await database?.drop();
  await deleteNamespaces(cluster, label);
  await chart?.helm(["uninstall", chart.release]).catch(() => {});
  await cluster.core.deleteNamespace({ name: chart.namespace }).catch(() => {});
  await rm(workDir, { recursive: true, force: true });
});

describe("end to end on the real cluster, as the chart's ServiceAccount", () => {
  it("takes the chart's Lease", async () => {
    const lease = await waitUntil(
      "found?.spec?.holderIdentity",
      async () => {
        const found = await cluster
          .kubeConfig()
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name: `${chart.fullname}-leader`, namespace: chart.namespace })
          .catch(() => undefined);
        return found?.spec?.holderIdentity ? found : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(lease.spec?.holderIdentity).toBeTruthy();
    await waitUntil(
      'operator.log().includes("controllers started")',
      async () => (operator.log().includes("controllers started") ? true : undefined),
      { timeoutMs: clusterPatience },
    );
  });

  it("makes the example Webhook Ready, with its Secret, finalizer, status and Events", async () => {
    await cluster.kubectl(["apply", "-f", "-"], await example("webhook.yaml"));
    const resource = await waitForReady(cluster, namespace, "demo-receiver", "True");
    expect(resource.metadata.finalizers).toContain("webhook-operator.io/finalizer");
    expect(resource.status).toMatchObject({ hasSecret: true, observedGeneration: 1 });
    expect(resource.status?.webhookId).toEqual(expect.any(Number));
    const events = await waitUntil(
      'all.some((e) => e.reason === "Reconciled")',
      async () => {
        const all = await eventsOf(cluster, namespace, "demo-receiver");
        return all.some((e) => e.reason === "Reconciled") ? all : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(events[0]?.source?.component).toBe("webhook-operator");
  });

  it("delivers created, ready and succeeded of each rollout of the example Deployment once, signed", async () => {
    await cluster.kubectl(["apply", "-f", "-"], await example("deployment.yaml"));
    await cluster.kubectl(["rollout", "status", "deployment/shop-api", "-n", namespace, "--timeout=120s"]);
    const first = await rolloutDeliveries("4b825dc");
    expectOneSignedRollout(first, "4b825dc");

    const patch = {
      spec: {
        template: {
          metadata: {
            annotations: {
              "webhook-operator.io/commit-sha": secondCommit,
              "webhook-operator.io/commit-message": "e2e: second rollout",
            },
          },
        },
      },
    };
    await cluster.kubectl([
      "patch",
      "deployment",
      "shop-api",
      "-n",
      namespace,
      "--type",
      "merge",
      "-p",
      JSON.stringify(patch),
    ]);
    await cluster.kubectl(["rollout", "status", "deployment/shop-api", "-n", namespace, "--timeout=120s"]);
    const second = await rolloutDeliveries(secondCommit);
    expectOneSignedRollout(second, secondCommit);
    expect(JSON.parse(second[0]?.body ?? "{}").payload.deployment_id).not.toBe(
      JSON.parse(first[0]?.body ?? "{}").payload.deployment_id,
    );
    expect(receiver.requests).toHaveLength(6);
  });

  it("removes the service's webhook and the finalizer when the Webhook is deleted", async () => {
    const resource = await waitForReady(cluster, namespace, "demo-receiver", "True");
    await cluster.kubectl([
      "delete",
      "webhooks.webhook-operator.io",
      "demo-receiver",
      "-n",
      namespace,
      "--wait=false",
    ]);
    await waitUntil(
      '(await getWebhook(cluster, namespace, "demo-receiver")) === undefined',
      async () => ((await getWebhook(cluster, namespace, "demo-receiver")) === undefined ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    const response = await fetch(
      `${operator.url}/api/projects/${resource.status?.projectId}/webhooks/${resource.status?.webhookId}`,
      { headers: { authorization: `Bearer ${adminKey}` } },
    );
    expect(response.status).toBe(404);
  });

  it("met no 403 in any of it: the chart's RBAC grants every call the operator made", () => {
    expect(operator.log()).toContain("controllers started");
    expect(operator.forbidden()).toEqual([]);
    // Nothing but the six deliveries of the two rollouts reached the receiver, even later.
    expect(receiver.requests).toHaveLength(6);
  });
});
