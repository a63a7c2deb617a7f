// Scenario A of the operator benchmark: N Webhook resources created against the real API server (32
// creates in flight), timed from the first create until every one is Ready=True with observedGeneration
// 1 and a webhookId in status, as an informer of the benchmark's own sees them.
import { performance } from "node:perf_hooks";
import type { Cluster } from "../test/support/cluster.js";
import type { BenchDatabase } from "./database.js";
import {
  createBenchNamespaces,
  createWebhook,
  deleteBenchNamespaces,
  signingSecretRef,
  startOperatorSystem,
  waitFor,
  watchReadiness,
} from "./operator-cluster.js";
import { measureWindow, type ProcessWindow } from "./operator-window.js";
import { percentile } from "./stats.js";

export interface WebhooksResult {
  resources: number;
  namespaces: number;
  withSecret: number;
  /** How long the N creates themselves took. */
  createMs: number;
  /** From the first create to the last resource seen Ready. */
  elapsedMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Ready resources whose webhookId or hasSecret does not match the database. */
  mismatched: number;
  rows: number;
  window: ProcessWindow;
}

const inFlight = 32;

export async function runWebhooks(
  database: BenchDatabase,
  cluster: Cluster,
  options: { resources: number; namespaces: number; timeoutMs: number; env?: Record<string, string> },
): Promise<WebhooksResult> {
  const label = `bench-hooks-${Date.now().toString(36)}`;
  const namespaces = await createBenchNamespaces(cluster, label, options.namespaces);
  const system = await startOperatorSystem(database, cluster, label, options.env);
  const createdAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const ready = new Map<string, { webhookId?: number; hasSecret?: boolean }>();
  const stopWatching = await watchReadiness(cluster, (key, resource) => {
    if (!createdAt.has(key)) return;
    readyAt.set(key, performance.now());
    ready.set(key, resource.status ?? {});
  });
  try {
    const hooks = Array.from({ length: options.resources }, (_, i) => ({
      namespace: namespaces[i % namespaces.length] as string,
      name: `hook-${String(i).padStart(5, "0")}`,
      secret: i % 4 === 0,
    }));
    const finish = await measureWindow();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < hooks.length) {
          const { namespace, name, secret } = hooks[next++] as (typeof hooks)[number];
          createdAt.set(`${namespace}/${name}`, performance.now());
          await createWebhook(cluster, namespace, name, {
            url: `https://hooks.example.com/bench/${name}`,
            events: ["deployment.created", "deployment.succeeded", "deployment.failed"],
            ...(secret ? { secretRef: signingSecretRef } : {}),
          });
        }
      }),
    );
    const createMs = performance.now() - started;
    await waitFor(
      `${hooks.length} Ready webhooks`,
      () => (readyAt.size === hooks.length ? true : undefined),
      options.timeoutMs,
      10,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (${readyAt.size} were Ready)`);
    });
    const elapsedMs = Math.max(...readyAt.values()) - started;
    const window = await finish();

    const { rows } = await system.observer.query<{ id: number; owner: string; has_secret: boolean }>(
      "SELECT id, owner, secret IS NOT NULL AS has_secret FROM webhooks WHERE owner IS NOT NULL",
    );
    const byOwner = new Map(rows.map((row) => [row.owner, row]));
    let mismatched = 0;
    for (const { namespace, name, secret } of hooks) {
      const key = `${namespace}/${name}`;
      const status = ready.get(key);
      const row = byOwner.get(key);
      if (row?.id !== status?.webhookId || status?.hasSecret !== secret || row?.has_secret !== secret)
        mismatched += 1;
    }
    const times = hooks
      .map(({ namespace, name }) => {
        const key = `${namespace}/${name}`;
        return (readyAt.get(key) as number) - (createdAt.get(key) as number);
      })
      .sort((a, b) => a - b);
    return {
      resources: hooks.length,
      namespaces: namespaces.length,
      withSecret: hooks.filter((h) => h.secret).length,
      createMs,
      elapsedMs,
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      maxMs: times.at(-1) ?? Number.NaN,
      mismatched,
      rows: rows.length,
      window,
    };
  } finally {
    await stopWatching();
    await deleteBenchNamespaces(cluster, namespaces);
    // Long enough for the finalizers of the deleted namespaces' Webhooks to be released.
    await waitFor(
      "the Webhooks to be released",
      async () => {
        const { rows } = await system.observer.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhooks",
        );
        return rows[0]?.n === 0 ? true : undefined;
      },
      options.timeoutMs,
      200,
    ).catch(() => {});
    await system.close();
  }
}
