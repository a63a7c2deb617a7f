// Scenario A of the operator benchmark: N Webhook resources created at once (test-side writes to the fake
// API server), timed until every one is Ready=True with observedGeneration 1 and a webhookId in status.
import { performance } from "node:perf_hooks";
import type { WebhookResource } from "../src/operator/api/webhook-v1alpha1.js";
import type { RecordedRequest } from "../test/support/fake-kube-apiserver.js";
import type { BenchDatabase } from "./database.js";
import {
  benchNamespaces,
  createSigningSecret,
  measureWindow,
  type ProcessWindow,
  signingSecretRef,
  startOperatorSystem,
  waitFor,
} from "./operator-cluster.js";
import { percentile } from "./stats.js";

export interface WebhooksResult {
  resources: number;
  namespaces: number;
  withSecret: number;
  /** From the first create to the last resource seen Ready. */
  elapsedMs: number;
  resourcesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How long the N creates themselves took (the fake's writes and watch fan-out). */
  createMs: number;
  /** Webhook rows in the database afterwards, and Ready resources whose webhookId is not one of them. */
  rows: number;
  mismatched: number;
  window: ProcessWindow;
  /** From the first create until the operator was idle and quiet. */
  settledMs: number;
  /** What the operator did after the last resource was Ready (reconciles of its own writes). */
  afterReady: ProcessWindow;
}

const statusPath = /\/namespaces\/([^/]+)\/webhooks\/([^/]+)\/status$/;

const isReady = (resource: WebhookResource | undefined) => {
  const ready = resource?.status?.conditions?.find((c) => c.type === "Ready");
  return (
    ready?.status === "True" &&
    resource?.status?.observedGeneration === 1 &&
    typeof resource.status.webhookId === "number"
  );
};

export async function runWebhooks(
  database: BenchDatabase,
  options: { resources: number; namespaces: number; timeoutMs: number; env?: Record<string, string> },
): Promise<WebhooksResult> {
  const namespaces = benchNamespaces("bench", options.namespaces);
  const system = await startOperatorSystem(database, {
    namespaces,
    env: options.env ?? {},
    // One Secret per namespace; every fourth Webhook signs with it.
    prepare: (kube) => {
      for (const namespace of namespaces) {
        createSigningSecret(kube, namespace);
      }
    },
  });
  const { kube } = system;
  try {
    const names = Array.from({ length: options.resources }, (_, i) => ({
      namespace: namespaces[i % namespaces.length] as string,
      name: `hook-${String(i).padStart(5, "0")}`,
      secret: i % 4 === 0,
    }));
    const key = (namespace: string, name: string) => `${namespace}/${name}`;
    const createdAt = new Map<string, number>();
    const readyAt = new Map<string, number>();

    const finish = await measureWindow(kube);
    const started = performance.now();
    for (const { namespace, name, secret } of names) {
      kube.create("webhooks", {
        apiVersion: "webhook-operator.io/v1alpha1",
        kind: "Webhook",
        metadata: { name, namespace },
        spec: {
          url: `https://hooks.example.com/bench/${name}`,
          events: ["deployment.created", "deployment.succeeded", "deployment.failed"],
          ...(secret ? { secretRef: signingSecretRef } : {}),
        },
      });
      createdAt.set(key(namespace, name), performance.now());
    }
    const createMs = performance.now() - started;

    // The fake records every request it answers; a finished PATCH of a Webhook's status is the moment
    // to read that one resource from the store (a full list copies every object, which would cost more
    // than the operator's own work). Requests still in progress are looked at again on the next poll.
    let cursor = 0;
    let unfinished: RecordedRequest[] = [];
    const poll = () => {
      const fresh = kube.requests.slice(cursor);
      cursor += fresh.length;
      const candidates = [...unfinished, ...fresh].filter(
        (r) => r.method === "PATCH" && statusPath.test(r.path),
      );
      unfinished = [];
      const now = performance.now();
      for (const request of candidates) {
        if (request.status === undefined) {
          unfinished.push(request);
          continue;
        }
        const [, namespace = "", name = ""] = statusPath.exec(request.path) ?? [];
        const k = key(namespace, name);
        if (readyAt.has(k) || !createdAt.has(k)) continue;
        if (isReady(kube.get("webhooks", { namespace, name }) as unknown as WebhookResource | undefined))
          readyAt.set(k, now);
      }
      return readyAt.size === names.length ? true : undefined;
    };
    await waitFor(`${names.length} Ready webhooks`, poll, options.timeoutMs, 5).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (${readyAt.size} were Ready)`);
    });
    const window = await finish();
    const elapsedMs = Math.max(...readyAt.values()) - started;

    // The work does not end at Ready: the operator's own writes (finalizer, status) come back as watch
    // events and are reconciled again. Settled = queues idle and no API request for 300 ms.
    const finishSettled = await measureWindow(kube);
    let requestsSeen = kube.requests.length;
    let quietSince = performance.now();
    await waitFor(
      "the operator to settle",
      async () => {
        await system.service.operator?.idle();
        if (kube.requests.filter((r, i) => i >= requestsSeen && !r.path.includes("/leases/")).length > 0) {
          requestsSeen = kube.requests.length;
          quietSince = performance.now();
        }
        return performance.now() - quietSince >= 300 ? true : undefined;
      },
      options.timeoutMs,
      20,
    );
    const settledMs = quietSince - started;
    const afterReady = await finishSettled();

    // Check the end state from the store and the database, now that timing is over.
    const { rows } = await system.observer.query<{ id: number; owner: string }>(
      "SELECT id, owner FROM webhooks WHERE owner IS NOT NULL",
    );
    const owners = new Map(rows.map((row) => [row.owner, row.id]));
    let mismatched = 0;
    for (const { namespace, name, secret } of names) {
      const resource = kube.get("webhooks", { namespace, name }) as unknown as WebhookResource | undefined;
      if (
        !isReady(resource) ||
        owners.get(key(namespace, name)) !== resource?.status?.webhookId ||
        resource?.status?.hasSecret !== secret
      )
        mismatched += 1;
    }
    const times = names
      .map(({ namespace, name }) => {
        const k = key(namespace, name);
        return (readyAt.get(k) as number) - (createdAt.get(k) as number);
      })
      .sort((a, b) => a - b);
    return {
      resources: names.length,
      namespaces: namespaces.length,
      withSecret: names.filter((n) => n.secret).length,
      elapsedMs,
      resourcesPerSecond: names.length / (elapsedMs / 1000),
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      maxMs: times[times.length - 1] ?? Number.NaN,
      createMs,
      rows: rows.length,
      mismatched,
      window,
      settledMs,
      afterReady,
    };
  } finally {
    await system.close();
  }
}
