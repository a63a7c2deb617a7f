// The big-cluster benchmark's moving parts: the operator as a process of its own (this build or an
// earlier one), what it reports on /metrics and /proc, a loopback receiver of the live rollout's
// events, and the live rollout itself.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Cluster } from "../test/support/cluster.js";
import { optInLabels } from "../test/support/webhook-resources.js";
import { benchLabel, namespaceName } from "./big-cluster-workloads.js";
import { wallClockMs } from "./clock.js";
import { type ServiceProcess, startServiceProcess } from "./service-process.js";

export const liveNamespace = namespaceName(0);

/** The first arrival of each status (pending, ready, succeeded) of each commit, as the receiver saw it. */
export async function startLiveReceiver() {
  const arrivals = new Map<string, number>();
  const find = (value: unknown, key: string): string | undefined => {
    if (!value || typeof value !== "object") return undefined;
    const record = value as Record<string, unknown>;
    if (typeof record[key] === "string") return record[key];
    for (const inner of Object.values(record)) {
      const found = find(inner, key);
      if (found) return found;
    }
    return undefined;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = wallClockMs();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const key = `${find(body, "commit_sha")}/${find(body, "status")}`;
        if (!arrivals.has(key)) arrivals.set(key, at);
      } catch {}
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrival: (commit: string, status: string) => arrivals.get(`${commit}/${status}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Build {
  name: string;
  entry?: string;
}

/** The operator, leading the bench's namespaces (and only them) under `lease`. */
export function startOperator(build: Build, databaseUrl: string, cluster: Cluster, lease: string) {
  return startServiceProcess(
    databaseUrl,
    {
      KUBERNETES: "true",
      KUBECONFIG: cluster.kubeconfigPath,
      NAMESPACE_SELECTOR: `${benchLabel}=big`,
      LEADER_ELECTION_LEASE_NAME: lease,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
    },
    build.entry,
  );
}

export interface Scrape {
  leader: boolean;
  /** Rollout reconciles done (any result). */
  reconciles: number;
  heapMiB: number;
}

const sample = (text: string, pattern: RegExp) =>
  [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);

export async function scrape(operator: ServiceProcess): Promise<Scrape> {
  const text = await (await fetch(`${operator.url}/metrics`)).text();
  return {
    leader: sample(text, /^webhook_operator_leader (\S+)$/gm) === 1,
    reconciles: sample(text, /^webhook_operator_reconciles_total\{controller="rollout"[^}]*\} (\S+)$/gm),
    heapMiB: sample(text, /^nodejs_heap_size_used_bytes (\S+)$/gm) / 2 ** 20,
  };
}

/** VmRSS and VmHWM (the peak since start) of a process, in MiB. */
export async function residentSet(pid: number): Promise<{ rssMiB: number; peakMiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const mib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024;
  return { rssMiB: mib("VmRSS"), peakMiB: mib("VmHWM") };
}

/** A new revision of a Deployment of the live namespace (its commit annotation changed); resolves when it is written. */
export async function rollLive(cluster: Cluster, liveDeployment: string, commit: string): Promise<number> {
  const deployment = await cluster.apps.readNamespacedDeployment({
    namespace: liveNamespace,
    name: liveDeployment,
  });
  const template = deployment.spec?.template;
  if (!template) throw new Error("the live Deployment has no pod template");
  template.metadata = {
    ...template.metadata,
    annotations: { ...template.metadata?.annotations, "webhook-operator.io/commit-sha": commit },
  };
  await cluster.apps.replaceNamespacedDeployment({
    namespace: liveNamespace,
    name: liveDeployment,
    body: deployment,
  });
  return wallClockMs();
}

/** The Secret and the Webhook of the live namespace, subscribed to every deployment event. */
export async function createLiveWebhook(cluster: Cluster, receiverUrl: string): Promise<void> {
  await cluster.core.createNamespacedSecret({
    namespace: liveNamespace,
    body: {
      metadata: { name: "hook-secret", labels: optInLabels },
      stringData: { token: "whsec-big-cluster" },
    },
  });
  await cluster.customObjects.createNamespacedCustomObject({
    group: "webhook-operator.io",
    version: "v1alpha1",
    namespace: liveNamespace,
    plural: "webhooks",
    body: {
      apiVersion: "webhook-operator.io/v1alpha1",
      kind: "Webhook",
      metadata: { name: "live", namespace: liveNamespace },
      spec: {
        url: `${receiverUrl}/live`,
        events: ["deployment.created", "deployment.ready", "deployment.succeeded"],
        secretRef: { name: "hook-secret", key: "token" },
      },
    },
  });
}
