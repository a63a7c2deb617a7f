import type { V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { deploymentManifest, operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, readyOf, waitForReady } from "../support/webhook-resources.js";

// Webhook resources with spec.filters on the real control plane: real Deployments with labels and
// environment annotations roll out, and each Webhook gets the events of the Deployments it selects
// only (no delivery at all for the others); one without filters gets everything, as before.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
let service: TestService | undefined;
const label = uniqueName("webhook-filters");
const namespace = uniqueName("filtered");

beforeAll(async () => {
  cluster = useCluster();
  database = await createTestDatabase();
  observer = createPool(database.url, 2);
  receiver = await startReceiver();
  await createNamespaces(cluster, label, namespace);
  service = await startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await receiver?.close();
  await observer?.end();
  await database?.drop();
});

const rolledOut = ["deployment.created", "deployment.ready", "deployment.succeeded"];

/** A Deployment with labels of its own (its metadata's, not its pods') and an environment. */
function labelled(name: string, labels: Record<string, string>, environment: string): V1Deployment {
  const manifest = deploymentManifest(name, {
    annotations: { "webhook-operator.io/environment": environment },
  });
  return { ...manifest, metadata: { ...manifest.metadata, labels } };
}

/** Per Webhook resource, the Deployments it got deliveries of, each with its event types. */
async function deliveredByName(webhookId: number | undefined): Promise<Record<string, string[]>> {
  const { rows } = await observer.query<{ name: string; events: string[] }>(
    `SELECT d.name, array_agg(e.event_type ORDER BY e.event_type) AS events
       FROM deliveries dl
       JOIN events e ON e.id = dl.event_id
       JOIN deployments d ON d.id = ((e.envelope::jsonb) -> 'payload' ->> 'deployment_id')::bigint
      WHERE dl.webhook_id = $1
      GROUP BY d.name ORDER BY d.name`,
    [webhookId],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.events]));
}

it("a Webhook with a label selector, environments or kinds gets only the matching Deployments' events", async () => {
  const events = rolledOut;
  await createWebhook(cluster, namespace, "everything", { url: `${receiver.url}/everything`, events });
  await createWebhook(cluster, namespace, "payments-web", {
    url: `${receiver.url}/payments-web`,
    events,
    filters: {
      labelSelector: {
        matchLabels: { team: "payments" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["web", "api"] },
          { key: "canary", operator: "DoesNotExist" },
        ],
      },
    },
  });
  await createWebhook(cluster, namespace, "production-deployments", {
    url: `${receiver.url}/production`,
    events,
    filters: { environments: ["production"], kinds: ["Deployment"] },
  });
  await createWebhook(cluster, namespace, "statefulsets", {
    url: `${receiver.url}/statefulsets`,
    events,
    filters: { kinds: ["StatefulSet"] },
  });
  const resources = {
    everything: await waitForReady(cluster, namespace, "everything", "True"),
    paymentsWeb: await waitForReady(cluster, namespace, "payments-web", "True"),
    production: await waitForReady(cluster, namespace, "production-deployments", "True"),
    statefulSets: await waitForReady(cluster, namespace, "statefulsets", "True"),
  };

  for (const deployment of [
    labelled("pay-web", { team: "payments", tier: "web" }, "production"),
    labelled("pay-db", { team: "payments", tier: "db" }, "production"),
    labelled("pay-canary", { team: "payments", tier: "web", canary: "true" }, "production"),
    labelled("pay-staging", { team: "payments", tier: "api" }, "staging"),
    labelled("shop", { team: "shop", tier: "web" }, "production"),
  ]) {
    await cluster.apps.createNamespacedDeployment({ namespace, body: deployment });
  }
  const names = ["pay-canary", "pay-db", "pay-staging", "pay-web", "shop"];
  const everyEvent = (of: string[]) => Object.fromEntries(of.map((name) => [name, [...events].sort()]));

  // The unfiltered webhook sees every rollout through: by then each event has been recorded, with the
  // deliveries of every webhook in the same transaction.
  await waitUntil(
    "every rollout's events delivered to the Webhook without filters",
    async (saw) => {
      const delivered = await deliveredByName(resources.everything.status?.webhookId);
      saw(delivered);
      return JSON.stringify(delivered) === JSON.stringify(everyEvent(names)) ? delivered : undefined;
    },
    { timeoutMs: clusterPatience * 2 },
  );
  expect(await deliveredByName(resources.paymentsWeb.status?.webhookId)).toEqual(
    everyEvent(["pay-staging", "pay-web"]),
  );
  expect(await deliveredByName(resources.production.status?.webhookId)).toEqual(
    everyEvent(["pay-canary", "pay-db", "pay-web", "shop"]),
  );
  expect(await deliveredByName(resources.statefulSets.status?.webhookId)).toEqual({});

  // What the receivers got: what was recorded, nothing else.
  await waitUntil(
    "the filtered deliveries at the receiver",
    async () =>
      receiver.requests.filter((request) => request.path === "/payments-web").length === 2 * events.length
        ? true
        : undefined,
    { timeoutMs: clusterPatience },
  );
  expect(receiver.requests.filter((request) => request.path === "/statefulsets")).toEqual([]);
});

it("refuses filters the CRD can judge at apply, and reports label keys it cannot as Ready=False InvalidFilters", async () => {
  const refused = await createWebhook(cluster, namespace, "in-without-values", {
    url: `${receiver.url}/refused`,
    events: ["deployment.succeeded"],
    filters: { labelSelector: { matchExpressions: [{ key: "tier", operator: "In" }] } },
  }).catch((error: unknown) => error);
  expect(String((refused as { body?: unknown }).body ?? refused)).toContain(
    "In and NotIn need at least one value; Exists and DoesNotExist take none",
  );
  const unknownKind = await createWebhook(cluster, namespace, "pods", {
    url: `${receiver.url}/refused`,
    events: ["deployment.succeeded"],
    filters: { kinds: ["Pod"] },
  }).catch((error: unknown) => error);
  expect(String((unknownKind as { body?: unknown }).body ?? unknownKind)).toContain("Unsupported value");

  await createWebhook(cluster, namespace, "bad-label", {
    url: `${receiver.url}/bad-label`,
    events: ["deployment.succeeded"],
    filters: { labelSelector: { matchLabels: { "-team": "payments" } } },
  });
  const bad = await waitForReady(cluster, namespace, "bad-label", "False");
  expect(readyOf(bad)).toMatchObject({ reason: "InvalidFilters" });
  expect(readyOf(bad)?.message).toContain(
    'spec.filters.labelSelector.matchLabels key "-team" is not a label key',
  );
});
