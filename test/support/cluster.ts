import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Namespace,
} from "@kubernetes/client-node";
import { inject } from "vitest";
import { repoRoot } from "./tools.js";
import { waitUntil } from "./wait.js";

const run = promisify(execFile);

declare module "vitest" {
  export interface ProvidedContext {
    /** The state directory of the real control plane of this run (scripts/cluster/start.sh). */
    clusterDir: string;
  }
}

/**
 * A real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a
 * kwok node) started by scripts/cluster/start.sh. Components can be stopped and started again, which
 * is how tests make the faults a real API server does not make on demand.
 */
export interface Cluster {
  dir: string;
  kubeconfigPath: string;
  /** A new admin KubeConfig each call (client-node objects keep per-config state). */
  kubeConfig(): KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  customObjects: CustomObjectsApi;
  kubectl(args: string[], input?: string): Promise<string>;
  start(...components: string[]): Promise<void>;
  stop(...components: string[]): Promise<void>;
  /** scripts/cluster/node.sh DIR …args: the real node of the node suite (import, tag, stop, check). */
  node(args: string[]): Promise<string>;
}

export function clusterAt(dir: string): Cluster {
  const kubeconfigPath = path.join(dir, "kubeconfig");
  const kubeConfig = () => {
    const config = new KubeConfig();
    config.loadFromFile(kubeconfigPath);
    return config;
  };
  const admin = kubeConfig();
  const script = (name: string, args: string[]) =>
    run("bash", [path.join(repoRoot, "scripts/cluster", name), dir, ...args], {
      timeout: 120_000,
      env: { ...process.env, CLUSTER_BIN: process.env.CLUSTER_BIN ?? "" },
    });
  return {
    dir,
    kubeconfigPath,
    kubeConfig,
    core: admin.makeApiClient(CoreV1Api),
    apps: admin.makeApiClient(AppsV1Api),
    customObjects: admin.makeApiClient(CustomObjectsApi),
    async kubectl(args, input) {
      const { stdout } = await kubectlAt(kubeconfigPath, args, input);
      return stdout;
    },
    async start(...components) {
      await script("start.sh", components);
    },
    async stop(...components) {
      await script("stop.sh", components);
    },
    async node(args) {
      return (await script("node.sh", args)).stdout;
    },
  };
}

/** The control plane of this test run (started once by test/support/cluster-setup.ts). */
export function useCluster(): Cluster {
  return clusterAt(inject("clusterDir"));
}

let kubectlPath: Promise<string> | undefined;
export async function kubectlAt(
  kubeconfigPath: string,
  args: string[],
  input?: string,
): Promise<{ stdout: string; stderr: string }> {
  kubectlPath ??= run("bash", [path.join(repoRoot, "scripts/fetch-k8s-tool.sh"), "kubectl"]).then(
    ({ stdout }) => stdout.trim().split("\n").at(-1) ?? "kubectl",
  );
  const binary = await kubectlPath;
  return new Promise((resolve, reject) => {
    const child = execFile(
      binary,
      ["--kubeconfig", kubeconfigPath, ...args],
      { timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          reject(
            Object.assign(error, {
              stdout,
              stderr,
              message: `kubectl ${args.join(" ")}: ${stderr || error.message}`,
            }),
          );
        else resolve({ stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A unique name for a test's namespaces, leases and other cluster-wide things: `<prefix>-<hex>`. */
export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(3).toString("hex")}`;

/**
 * Creates namespaces labelled for one test file, so that the file's operator can select exactly
 * them (NAMESPACE_SELECTOR) while other files' leftovers stay out of its way.
 */
export async function createNamespaces(
  cluster: Cluster,
  label: string,
  ...names: string[]
): Promise<V1Namespace[]> {
  return Promise.all(
    names.map((name) =>
      cluster.core.createNamespace({
        body: { metadata: { name, labels: { "webhook-operator.io/test": label } } },
      }),
    ),
  );
}

/**
 * How long a namespace's deletion may take. The namespace controller deletes everything in it, kind by
 * kind, before the object goes: 22–28 s here on a quiet machine, so three minutes is generous for a
 * machine several times as loaded.
 */
export const namespacePatience = 180_000;

/**
 * Waits until the namespace object is gone: what the operator's clean-up of its project waits on. A
 * time-out names the namespace and what it last showed (its phase and conditions).
 */
export function namespaceGone(cluster: Cluster, name: string): Promise<true> {
  return waitUntil(
    `namespace ${name} to be deleted by the namespace controller`,
    async (saw) => {
      const namespace = await cluster.core.readNamespace({ name }).catch((error: unknown) => {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      });
      if (namespace === undefined) return true;
      saw({ phase: namespace.status?.phase, conditions: namespace.status?.conditions });
      return undefined;
    },
    { timeoutMs: namespacePatience, intervalMs: 500 },
  );
}

/**
 * Deletes a test file's namespaces without waiting, after releasing the Webhook finalizers in them
 * (their operator may be gone already, and a finalizer would hold the namespace in Terminating).
 */
export async function deleteNamespaces(cluster: Cluster, label: string): Promise<void> {
  const { items } = await cluster.core.listNamespace({ labelSelector: `webhook-operator.io/test=${label}` });
  for (const namespace of items) {
    const name = namespace.metadata?.name ?? "";
    const webhooks = (await cluster.customObjects
      .listNamespacedCustomObject({
        group: "webhook-operator.io",
        version: "v1alpha1",
        namespace: name,
        plural: "webhooks",
      })
      .catch(() => ({ items: [] }))) as { items: { metadata: { name: string; finalizers?: string[] } }[] };
    for (const webhook of webhooks.items) {
      if (!webhook.metadata.finalizers?.length) continue;
      await cluster
        .kubectl([
          "-n",
          name,
          "patch",
          "webhooks.webhook-operator.io",
          webhook.metadata.name,
          "--type",
          "merge",
          "-p",
          '{"metadata":{"finalizers":null}}',
        ])
        .catch(() => {});
    }
    await cluster.core.deleteNamespace({ name }).catch(() => {});
  }
}
