import type { V1Deployment } from "@kubernetes/client-node";
import { expect } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { createPool } from "../../src/db/pool.js";
import { type Cluster, createNamespaces, deleteNamespaces, useCluster } from "./cluster.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { waitUntil } from "./wait.js";
import { clusterPatience, createWebhook } from "./webhook-resources.js";

// Real Deployments rolled out by the real Deployment controller on the kwok node, and what the
// operator made of them at a real receiver.

export const allDeploymentEvents = [
  "deployment.created",
  "deployment.ready",
  "deployment.succeeded",
  "deployment.failed",
  "deployment.cancelled",
];

/** The settings every cluster test's operator runs with: its own namespaces, its own Lease. */
export function operatorEnv(label: string): Record<string, string> {
  return {
    NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
    LEADER_ELECTION_LEASE_NAME: label,
    LEADER_ELECTION_RETRY_PERIOD_MS: "100",
    LEADER_ELECTION_LEASE_DURATION_MS: "1000",
    DELIVERY_POLL_INTERVAL_MS: "200",
  };
}

/**
 * A gate holds a rollout mid-way: pods select a node label that no node has yet, so they stay
 * Pending (the rollout is `created` and no further) until the gate opens (the kwok node gets the
 * label) and they become Ready.
 */
export const gateSelector = (gate: string) => ({ [`gate.webhook-operator.io/${gate}`]: "open" });

export async function openGate(cluster: Cluster, gate: string): Promise<void> {
  await cluster.kubectl([
    "label",
    "node",
    "kwok-node-0",
    `gate.webhook-operator.io/${gate}=open`,
    "--overwrite",
  ]);
}

export function deploymentManifest(
  name: string,
  options: {
    replicas?: number;
    gate?: string;
    progressDeadlineSeconds?: number;
    annotations?: Record<string, string>;
    templateAnnotations?: Record<string, string>;
  } = {},
): V1Deployment {
  return {
    metadata: { name, annotations: options.annotations },
    spec: {
      replicas: options.replicas ?? 2,
      progressDeadlineSeconds: options.progressDeadlineSeconds,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: options.templateAnnotations },
        spec: {
          nodeSelector: options.gate ? gateSelector(options.gate) : undefined,
          containers: [{ name: "app", image: "registry.example/app:1" }],
        },
      },
    },
  };
}

/** The deployment.* events a receiver got, per Deployment name and revision, as "type:status". */
export function rolloutLedger(observer: Pool, receiver: Receiver) {
  const rollouts = new Map<number, string>();
  async function refresh() {
    const { rows } = await observer.query<{ id: number; name: string; revision: string }>(
      "SELECT id, name, revision FROM deployments",
    );
    for (const row of rows) rollouts.set(row.id, `${row.name}@${row.revision}`);
  }
  function received(name: string, revision = "1"): string[] {
    return receiver.requests
      .map((request) => JSON.parse(request.body))
      .filter((envelope) => rollouts.get(envelope.payload.deployment_id) === `${name}@${revision}`)
      .map((envelope) => `${envelope.event_type}:${envelope.payload.status}`);
  }
  return {
    received,
    /**
     * Waits for `expected` (in any order: deliveries are concurrent), then until every delivery of every
     * event recorded for the rollout has been sent: what the receiver holds then is all that was recorded
     * (a duplicate, or an event too many, would be there), and must be exactly `expected`.
     */
    async waitFor(name: string, expected: string[], revision = "1"): Promise<void> {
      await waitUntil(
        "received(name, revision).length >= expected.length",
        async () => {
          await refresh();
          return received(name, revision).length >= expected.length ? true : undefined;
        },
        { timeoutMs: clusterPatience },
      ).catch(() => {
        throw new Error(
          `${name}@${revision}: expected ${expected.join(", ")}; got ${received(name, revision).join(", ")}`,
        );
      });
      await waitUntil(
        `every delivery of ${name}@${revision}'s events to be sent`,
        async () => {
          const { rows } = await observer.query<{ unsent: number }>(
            `SELECT count(*)::int AS unsent
             FROM deployments r
             JOIN events e ON (e.envelope::jsonb->'payload'->>'deployment_id')::bigint = r.id
             JOIN deliveries d ON d.event_id = e.id
            WHERE r.name = $1 AND r.revision = $2 AND d.delivered_at IS NULL`,
            [name, revision],
          );
          return rows[0]?.unsent === 0 ? true : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      await refresh();
      expect([...received(name, revision)].sort()).toEqual([...expected].sort());
    },
  };
}

/**
 * What a rollout test file needs: the cluster, its own database (and an observer pool on it), a
 * receiver, its labelled namespace, and there a Webhook `all-deploys` subscribed to every
 * deployment.* event at the receiver. `close()` undoes it all.
 */
export interface RolloutTestBed {
  cluster: Cluster;
  database: TestDatabase;
  observer: Pool;
  receiver: Receiver;
  close(): Promise<void>;
}

export async function rolloutTestBed(label: string, namespace: string): Promise<RolloutTestBed> {
  const cluster = useCluster();
  const database = await createTestDatabase();
  const observer = createPool(database.url, 2);
  const receiver = await startReceiver();
  await createNamespaces(cluster, label, namespace);
  await createWebhook(cluster, namespace, "all-deploys", {
    url: `${receiver.url}/hook`,
    events: allDeploymentEvents,
  });
  return {
    cluster,
    database,
    observer,
    receiver,
    async close() {
      await deleteNamespaces(cluster, label);
      await receiver.close();
      await observer.end();
      await database.drop();
    },
  };
}
