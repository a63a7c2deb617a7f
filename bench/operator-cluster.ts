// The operator benchmark's system under test: the real service (startService: migrations, API, delivery
// workers, and the controller role) in this process, against a fresh benchmark database and the FAKE
// Kubernetes API server of the tests (test/support/fake-kube-apiserver.ts), which also runs in this
// process. Both share one event loop, as the tests do: the fake's own cost (JSON copies, watch streams)
// is part of every number, and the ELU/CPU columns say how busy that loop was.
import { performance } from "node:perf_hooks";
import { loadConfig } from "../src/config.js";
import { createPool, type Pool } from "../src/db/pool.js";
import { createLogger } from "../src/logger.js";
import { metrics } from "../src/metrics.js";
import { type RunningService, startService } from "../src/service.js";
import { type FakeKubeApiServer, startFakeKubeApiServer } from "../test/support/fake-kube-apiserver.js";
import type { BenchDatabase } from "./database.js";
import { benchServiceEnv } from "./fixtures.js";

/** Fast leader election, so the controllers start within a tick of the service. */
export const operatorEnv = {
  LEADER_ELECTION_RETRY_PERIOD_MS: "100",
  LEADER_ELECTION_LEASE_DURATION_MS: "1000",
};

/** `count` namespace names: `<prefix>-00`, `<prefix>-01`, … */
export function benchNamespaces(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(2, "0")}`);
}

/** The Secret a bench Webhook's secretRef points at: `hook-secret`, key `token`, in `namespace`. */
export const signingSecretRef = { name: "hook-secret", key: "token" };

export function createSigningSecret(kube: FakeKubeApiServer, namespace: string): void {
  kube.create("secrets", {
    metadata: { name: signingSecretRef.name, namespace },
    stringData: { [signingSecretRef.key]: `whsec-${namespace}` },
  });
}

export interface OperatorSystem {
  kube: FakeKubeApiServer;
  service: RunningService;
  /** A small pool of the benchmark's own, for reading results (not the service's connections). */
  observer: Pool;
  close(): Promise<void>;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined; throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 20,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * A fake cluster with `namespaces`, `prepare` run on it (objects that exist before the operator starts),
 * then the service started against it and the database; resolves once this instance leads and its
 * informers watch Webhooks and Deployments.
 */
export async function startOperatorSystem(
  database: BenchDatabase,
  options: {
    namespaces: string[];
    prepare?: (kube: FakeKubeApiServer) => void;
    env?: Record<string, string>;
  },
): Promise<OperatorSystem> {
  const kube = await startFakeKubeApiServer();
  for (const name of options.namespaces) kube.create("namespaces", { metadata: { name } });
  options.prepare?.(kube);
  const config = loadConfig({
    DATABASE_URL: database.url,
    ...benchServiceEnv,
    ...operatorEnv,
    ...options.env,
  });
  const service = await startService(config, createLogger(config.logLevel), {
    kubeConfig: kube.kubeConfig(),
  });
  const observer = createPool(database.url, 2);
  const close = async () => {
    await service.close();
    await kube.close();
    await observer.end();
  };
  try {
    await waitFor("leadership", () => (service.operator?.isLeader() ? true : undefined), 10_000);
    await kube.waitForWatches("webhooks", 1, 10_000);
    await kube.waitForWatches("deployments", 1, 10_000);
  } catch (error) {
    await close();
    throw error;
  }
  return { kube, service, observer, close };
}

/** Reconciles per controller over a window: how many, and the mean time inside the reconcile function. */
export interface ReconcileStats {
  count: number;
  meanMs: number;
  errors: number;
}

interface MetricsSnapshot {
  durations: Map<string, { count: number; sum: number }>;
  results: Map<string, number>;
}

async function snapshotMetrics(): Promise<MetricsSnapshot> {
  const durations = new Map<string, { count: number; sum: number }>();
  for (const value of (await metrics.reconcileDuration.get()).values) {
    const controller = String(value.labels.controller);
    const entry = durations.get(controller) ?? { count: 0, sum: 0 };
    if (value.metricName?.endsWith("_count")) entry.count = value.value;
    if (value.metricName?.endsWith("_sum")) entry.sum = value.value;
    durations.set(controller, entry);
  }
  const results = new Map<string, number>();
  for (const value of (await metrics.reconciles.get()).values) {
    results.set(`${value.labels.controller}/${value.labels.result}`, value.value);
  }
  return { durations, results };
}

/** What the process did during a window: CPU, event-loop utilization, reconciles, API requests. */
export interface ProcessWindow {
  /** CPU time of this process (operator + fake API server + driver) as a share of one core. */
  cpuShare: number;
  /** Event-loop utilization of this process: 1 means the loop never waited for I/O. */
  elu: number;
  reconciles: Map<string, ReconcileStats>;
  /** Requests the fake API server answered in the window, by "METHOD resource[/sub]". */
  requests: Map<string, number>;
}

function requestKind(method: string, path: string): string {
  const parts = path.split("/").filter(Boolean);
  const nsIndex = parts.indexOf("namespaces");
  const afterNs = nsIndex >= 0 && parts.length > nsIndex + 2 ? parts.slice(nsIndex + 2) : parts.slice(-1);
  const [resource = "?", name, sub] = afterNs;
  return `${method} ${resource}${sub ? `/${sub}` : name === undefined ? " (collection)" : ""}`;
}

export async function measureWindow(kube: FakeKubeApiServer): Promise<() => Promise<ProcessWindow>> {
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  const before = await snapshotMetrics();
  const firstRequest = kube.requests.length;
  return async () => {
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const after = await snapshotMetrics();
    const reconciles = new Map<string, ReconcileStats>();
    for (const [controller, end] of after.durations) {
      const start = before.durations.get(controller) ?? { count: 0, sum: 0 };
      const count = end.count - start.count;
      const errors =
        (after.results.get(`${controller}/error`) ?? 0) - (before.results.get(`${controller}/error`) ?? 0);
      if (count > 0)
        reconciles.set(controller, { count, meanMs: ((end.sum - start.sum) / count) * 1000, errors });
    }
    const requests = new Map<string, number>();
    for (const request of kube.requests.slice(firstRequest)) {
      if (request.watch) continue;
      const kind = requestKind(request.method, request.path);
      requests.set(kind, (requests.get(kind) ?? 0) + 1);
    }
    return {
      cpuShare: (used.user + used.system) / 1000 / elapsedMs,
      elu: performance.eventLoopUtilization(elu).utilization,
      reconciles,
      requests,
    };
  };
}

/** Renders rows as an aligned text table: first column left-aligned, the others right-aligned. */
export function formatRows(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function describeWindow(window: ProcessWindow): string[] {
  const lines = [
    `process: CPU ${(window.cpuShare * 100).toFixed(0)}% of one core, event-loop utilization ${(window.elu * 100).toFixed(0)}%`,
  ];
  for (const [controller, stats] of window.reconciles) {
    lines.push(
      `${controller} reconciles: ${stats.count} (mean ${stats.meanMs.toFixed(1)} ms inside the reconcile${stats.errors ? `, ${stats.errors} failed and requeued` : ""})`,
    );
  }
  const requests = [...window.requests.entries()].sort(([, a], [, b]) => b - a);
  if (requests.length > 0)
    lines.push(`API requests: ${requests.map(([kind, count]) => `${kind} ×${count}`).join(", ")}`);
  return lines;
}
