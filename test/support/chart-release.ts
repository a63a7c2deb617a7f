import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Cluster } from "./cluster.js";
import { chartDir } from "./monitoring-files.js";
import { locateHelm } from "./tools.js";

const run = promisify(execFile);

// The chart installed for real with helm into the test control plane, and a kubeconfig that acts as
// the chart's ServiceAccount, so the operator process outside the cluster (no container runs on the
// kwok node) is held to exactly the RBAC the chart grants.

/** Values that suit a cluster where no container runs: one replica, the bundled Postgres on an emptyDir. */
export const clusterValues = {
  replicaCount: "1",
  "postgres.persistence.enabled": "false",
};

export interface ChartRelease {
  release: string;
  namespace: string;
  /** The names the chart gives its objects (<release>-webhook-operator unless the release says it). */
  fullname: string;
  helm(args: string[]): Promise<string>;
}

export function chartRelease(cluster: Cluster, release: string, namespace: string): ChartRelease {
  const helm = locateHelm().path;
  if (!helm) throw new Error(locateHelm().reason);
  return {
    release,
    namespace,
    fullname: release.includes("webhook-operator") ? release : `${release}-webhook-operator`,
    async helm(args) {
      try {
        const { stdout } = await run(
          helm,
          [...args, "--kubeconfig", cluster.kubeconfigPath, "--namespace", namespace],
          {
            timeout: 300_000,
            maxBuffer: 16 * 1024 * 1024,
          },
        );
        return stdout;
      } catch (error) {
        const { stderr } = error as { stderr?: string };
        throw new Error(`helm ${args.join(" ")}: ${stderr || error}`);
      }
    },
  };
}

/** `helm install` (or upgrade with --install) of charts/webhook-operator with --set pairs. */
export async function installChart(
  chart: ChartRelease,
  values: Record<string, string> = clusterValues,
  command: "install" | "upgrade" = "install",
): Promise<void> {
  const sets = Object.entries(values).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
  await chart.helm([
    command,
    chart.release,
    chartDir,
    ...(command === "install" ? ["--create-namespace"] : []),
    ...sets,
  ]);
}

/**
 * A kubeconfig for the chart's ServiceAccount: the cluster's server and CA with a token from the
 * TokenRequest API (`kubectl create token`), valid for an hour.
 */
export async function serviceAccountKubeconfig(
  cluster: Cluster,
  chart: ChartRelease,
  dir: string,
): Promise<string> {
  const token = (
    await cluster.kubectl(["create", "token", chart.fullname, "-n", chart.namespace, "--duration=1h"])
  ).trim();
  const admin = cluster.kubeConfig().getCurrentCluster();
  if (!admin) throw new Error(`no cluster in ${cluster.kubeconfigPath}`);
  const file = path.join(dir, `${chart.release}-sa.kubeconfig`);
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "test", cluster: { server: admin.server, "certificate-authority": admin.caFile } }],
    users: [{ name: chart.fullname, user: { token } }],
    contexts: [
      { name: "sa", context: { cluster: "test", user: chart.fullname, namespace: chart.namespace } },
    ],
    "current-context": "sa",
  };
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

// What the pod gets that a process on this machine cannot use: the in-cluster database address, the
// mounted API key, secret key and metrics token files, the container's port and home.
const podOnly = new Set([
  "DATABASE_URL_FILE",
  "API_KEY_FILE",
  "SECRET_ENCRYPTION_KEYS_FILE",
  "METRICS_TOKEN_FILE",
  "PORT",
  "HOME",
]);

/**
 * The environment the chart gives the operator container (read back from the installed Deployment),
 * less what only works inside the pod, with the downward-API namespace filled in: the process outside
 * the cluster runs configured as the chart configures it (its Lease name, for one).
 */
export async function chartEnvironment(
  cluster: Cluster,
  chart: ChartRelease,
): Promise<Record<string, string>> {
  const deployment = await cluster.apps.readNamespacedDeployment({
    name: chart.fullname,
    namespace: chart.namespace,
  });
  const env = deployment.spec?.template.spec?.containers[0]?.env ?? [];
  // The webhook secrets' keys, which the pod reads from its mounted file, are read from the Secret
  // the chart generated: the process outside uses the very keys a replica would.
  const keysVolume = deployment.spec?.template.spec?.volumes?.find((v) => v.name === "secret-keys")?.secret;
  const keysSecret = keysVolume?.secretName
    ? await cluster.core.readNamespacedSecret({ name: keysVolume.secretName, namespace: chart.namespace })
    : undefined;
  const keys = keysSecret?.data?.[keysVolume?.items?.[0]?.key ?? "keys"];
  return {
    ...Object.fromEntries(
      env.flatMap((v) => (v.value !== undefined && !podOnly.has(v.name) ? [[v.name, v.value]] : [])),
    ),
    ...(keys ? { SECRET_ENCRYPTION_KEYS: Buffer.from(keys, "base64").toString("utf8").trim() } : {}),
    POD_NAMESPACE: chart.namespace,
  };
}
