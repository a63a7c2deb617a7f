// The operator benchmark's Kubernetes: a real control plane (etcd, kube-apiserver, controller-manager,
// scheduler, a kwok node) started by scripts/cluster/start.sh in a temporary directory and stopped at
// the end, or BENCH_CLUSTER_DIR's running one; the Webhook CRD applied. The service (API, delivery
// workers, controllers) runs in this process against it, so its CPU and reconciles can be measured.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { AppsV1Api, CustomObjectsApi, makeInformer, type V1Deployment } from "@kubernetes/client-node";
import { loadConfig } from "../src/app/config.js";
import { type RunningService, startService } from "../src/app/service.js";
import { createPool, type Pool } from "../src/db/pool.js";
import { createLogger } from "../src/logger.js";
import type { WebhookResource } from "../src/operator/api/webhook-v1alpha1.js";
import { type Cluster, clusterAt } from "../test/support/cluster.js";
import { repoRoot } from "../test/support/tools.js";
import { optInLabels } from "../test/support/webhook-resources.js";
import type { BenchDatabase } from "./database.js";
import { benchServiceEnv } from "./fixtures.js";

const run = promisify(execFile);

export async function startBenchCluster(): Promise<{
  cluster: Cluster;
  startedInMs: number;
  stop(): Promise<void>;
}> {
  const reuse = process.env.BENCH_CLUSTER_DIR;
  const dir = reuse ?? (await mkdtemp(path.join(tmpdir(), "wo-bench-cluster-")));
  const started = performance.now();
  await run("bash", [path.join(repoRoot, "scripts/cluster/start.sh"), dir], { timeout: 3_600_000 });
  const cluster = clusterAt(dir);
  await cluster.kubectl(["apply", "--server-side", "-f", path.join(repoRoot, "crds")]);
  await cluster.kubectl(["wait", "--for=condition=Established", "crd/webhooks.webhook-operator.io"]);
  return {
    cluster,
    startedInMs: performance.now() - started,
    async stop() {
      if (reuse) return;
      await run("bash", [path.join(repoRoot, "scripts/cluster/stop.sh"), dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Namespaces labelled `webhook-operator.io/bench=<label>` (the bench operator selects only them). */
export async function createBenchNamespaces(
  cluster: Cluster,
  label: string,
  count: number,
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${label}-${String(i).padStart(2, "0")}`);
  for (const name of names) {
    await cluster.core.createNamespace({
      body: { metadata: { name, labels: { "webhook-operator.io/bench": label } } },
    });
    await cluster.core.createNamespacedSecret({
      namespace: name,
      body: {
        metadata: { name: signingSecretRef.name, labels: optInLabels },
        stringData: { [signingSecretRef.key]: `whsec-${name}` },
      },
    });
  }
  return names;
}

/** Deletes the namespaces without waiting (the operator, still running, releases the finalizers). */
export async function deleteBenchNamespaces(cluster: Cluster, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => cluster.core.deleteNamespace({ name }).catch(() => {})));
}

/** The Secret a bench Webhook's secretRef points at: `hook-secret`, key `token`, in each namespace. */
export const signingSecretRef = { name: "hook-secret", key: "token" };

export function createWebhook(
  cluster: Cluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
) {
  return cluster.customObjects.createNamespacedCustomObject({
    group: "webhook-operator.io",
    version: "v1alpha1",
    namespace,
    plural: "webhooks",
    body: {
      apiVersion: "webhook-operator.io/v1alpha1",
      kind: "Webhook",
      metadata: { name, namespace },
      spec,
    },
  });
}

export const isReady = (resource: WebhookResource | undefined): boolean => {
  const ready = resource?.status?.conditions?.find((c) => c.type === "Ready");
  return (
    ready?.status === "True" &&
    resource?.status?.observedGeneration === 1 &&
    typeof resource.status.webhookId === "number"
  );
};

/** Calls `onReady(namespace/name, resource)` the first time each Webhook is seen Ready (an informer as admin). */
export async function watchReadiness(
  cluster: Cluster,
  onReady: (key: string, resource: WebhookResource) => void,
): Promise<() => Promise<void>> {
  const customObjects = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
  const target = { group: "webhook-operator.io", version: "v1alpha1", plural: "webhooks" };
  const informer = makeInformer(cluster.kubeConfig(), "/apis/webhook-operator.io/v1alpha1/webhooks", () =>
    customObjects.listClusterCustomObject(target),
  );
  const seen = new Set<string>();
  const check = (object: unknown) => {
    const resource = object as WebhookResource;
    const key = `${resource.metadata.namespace}/${resource.metadata.name}`;
    if (seen.has(key) || !isReady(resource)) return;
    seen.add(key);
    onReady(key, resource);
  };
  informer.on("add", check);
  informer.on("update", check);
  await informer.start();
  return () => informer.stop();
}

/**
 * Watches every Deployment as the operator does (its own informer on the same API server) and calls
 * `onChange` with each version as it arrives: the benchmark times each rollout step from the moment
 * the status that completes it was visible to a watcher, which leaves out the control plane's share.
 */
export async function watchDeployments(
  cluster: Cluster,
  onChange: (deployment: V1Deployment) => void,
): Promise<() => Promise<void>> {
  const apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
  const informer = makeInformer(cluster.kubeConfig(), "/apis/apps/v1/deployments", () =>
    apps.listDeploymentForAllNamespaces(),
  );
  informer.on("add", onChange);
  informer.on("update", onChange);
  await informer.start();
  return () => informer.stop();
}

export interface OperatorSystem {
  service: RunningService;
  /** A small pool of the benchmark's own, for reading results (not the service's connections). */
  observer: Pool;
  close(): Promise<void>;
}

/** The service against the cluster and the database, leading and with its caches filled. */
export async function startOperatorSystem(
  database: BenchDatabase,
  cluster: Cluster,
  label: string,
  env: Record<string, string> = {},
): Promise<OperatorSystem> {
  const config = loadConfig({
    DATABASE_URL: database.url,
    ...benchServiceEnv,
    NAMESPACE_SELECTOR: `webhook-operator.io/bench=${label}`,
    LEADER_ELECTION_LEASE_NAME: label,
    LEADER_ELECTION_RETRY_PERIOD_MS: "100",
    LEADER_ELECTION_LEASE_DURATION_MS: "1000",
    ...env,
  });
  const service = await startService(config, createLogger(config.logLevel), {
    kubeConfig: cluster.kubeConfig(),
  });
  const observer = createPool(database.url, 2);
  const close = async () => {
    await service.close();
    await observer.end();
  };
  try {
    await waitFor("leadership", () => (service.operator?.isLeader() ? true : undefined), 30_000);
    await service.operator?.idle();
  } catch (error) {
    await close();
    throw error;
  }
  return { service, observer, close };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
