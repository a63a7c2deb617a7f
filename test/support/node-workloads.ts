import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { ChartRelease } from "./chart-release.js";
import type { Cluster } from "./cluster.js";
import { receiverDeliveries } from "./node-cluster.js";
import { eventOf, type LoggedDelivery, signedWith } from "./receiver-log.js";
import { repoRoot } from "./tools.js";
import { waitUntil } from "./wait.js";

// Workloads of the node suite made from manifests/examples: a receiver pod in a namespace of the test's
// own, a project namespace with the example Webhook pointed at it, bursts of Deployments of real pods.

const example = (file: string) => readFileSync(path.join(repoRoot, "manifests/examples", file), "utf8");

/** What a node test installs: the chart, a receiver per namespace, the example Webhook to the first. */
export interface NodeRelease {
  /** The chart to install (this checkout's, or a previous release's). */
  chartDir: string;
  /** `--set` values, each `key=value`. */
  sets: string[];
  /** The namespace of the example Webhook. */
  project: string;
  /** A receiver is deployed in each; the example Webhook delivers to the first. */
  receivers: [string, ...string[]];
}

/** `helm install --wait` of the chart, then the receivers and the example Webhook, Ready. */
export async function installNodeRelease(cluster: Cluster, chart: ChartRelease, release: NodeRelease) {
  await chart.helm([
    ...["install", chart.release, release.chartDir, "--create-namespace", "--wait", "--timeout", "10m"],
    ...release.sets.flatMap((value) => ["--set", value]),
  ]);
  for (const receiver of release.receivers) await deployReceiver(cluster, receiver);
  await declareWebhook(cluster, release.project, release.receivers[0]);
}

/**
 * Takes away what installNodeRelease made (and the namespaces in `others`): the Webhooks first, so
 * their finalizer is handled while the operator still runs, then the release, then the namespaces.
 */
export async function removeNodeRelease(
  cluster: Cluster,
  chart: ChartRelease,
  release: Pick<NodeRelease, "project" | "receivers">,
  others: string[] = [],
): Promise<void> {
  await cluster
    .kubectl(["delete", "wh", "--all", "-n", release.project, "--wait=true", "--timeout=120s"])
    .catch(() => {});
  await chart.helm(["uninstall", chart.release, "--wait"]).catch(() => {});
  const namespaces = [chart.namespace, release.project, ...release.receivers, ...others];
  await cluster.kubectl(["delete", "namespace", ...namespaces, "--timeout=300s"]).catch(() => {});
}

/** The example receiver (Namespace, Secret, script, Deployment, Service) in `namespace`, rolled out. */
export async function deployReceiver(cluster: Cluster, namespace: string): Promise<void> {
  await cluster.kubectl(
    ["apply", "-f", "-"],
    example("receiver.yaml").replace(/^(\s*)(name|namespace): demo-receiver$/gm, `$1$2: ${namespace}`),
  );
  await cluster.kubectl([
    "-n",
    namespace,
    "rollout",
    "status",
    "deployment/webhook-receiver",
    "--timeout=300s",
  ]);
}

/** The example Webhook (with its Namespace and Secret) in `project`, delivering to the receiver of `receiver`. */
export async function declareWebhook(cluster: Cluster, project: string, receiver: string): Promise<void> {
  const manifest = example("webhook.yaml")
    .replace(/^(\s*)(name|namespace): demo$/gm, `$1$2: ${project}`)
    .replace(/^(\s*url: http:\/\/webhook-receiver)\.demo-receiver\./m, `$1.${receiver}.`);
  if (!manifest.includes(`url: http://webhook-receiver.${receiver}.svc`)) {
    throw new Error(
      "manifests/examples/webhook.yaml no longer has the url line this helper points elsewhere",
    );
  }
  await cluster.kubectl(["apply", "-f", "-"], manifest);
  await cluster.kubectl([
    "-n",
    project,
    "wait",
    "--for=condition=Ready",
    "webhooks.webhook-operator.io/demo-receiver",
    "--timeout=180s",
  ]);
}

/** `count` Deployments of the pause image, each one rollout of commit `<prefix>-<i>`. */
export function deploymentBurst(namespace: string, prefix: string, count: number): string {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: `${prefix}-${i}`, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: `${prefix}-${i}` } },
        template: {
          metadata: {
            labels: { app: `${prefix}-${i}` },
            annotations: { "webhook-operator.io/commit-sha": `${prefix}-${i}` },
          },
          spec: {
            automountServiceAccountToken: false,
            terminationGracePeriodSeconds: 0,
            containers: [
              { name: "app", image: "registry.k8s.io/pause:3.10", resources: { requests: { cpu: "1m" } } },
            ],
          },
        },
      },
    }),
  ).join("\n---\n");
}

interface StatsSummary {
  pods: { podRef: { name: string; namespace: string }; memory?: { workingSetBytes?: number } }[];
}

/**
 * Samples the working set of the pods of `namespace` whose name matches `pods` from the
 * kubelet's /stats/summary (through the apiserver's node proxy) every second until stop() is called;
 * resolves with the highest value seen per pod, in MiB.
 */
export function sampleMemory(cluster: Cluster, namespace: string, pods: RegExp) {
  const peaks = new Map<string, number>();
  let running = true;
  const sampling = (async () => {
    while (running) {
      const summary = JSON.parse(
        await cluster.kubectl(["get", "--raw", "/api/v1/nodes/node-0/proxy/stats/summary"]),
      ) as StatsSummary;
      for (const pod of summary.pods) {
        const bytes = pod.memory?.workingSetBytes;
        if (pod.podRef.namespace !== namespace || !pods.test(pod.podRef.name) || !bytes) continue;
        peaks.set(pod.podRef.name, Math.max(peaks.get(pod.podRef.name) ?? 0, bytes / 2 ** 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();
  return {
    async stop(): Promise<Map<string, number>> {
      running = false;
      await sampling;
      return peaks;
    },
  };
}

/** The holder of a Lease, once it has one. */
export async function leaseHolder(cluster: Cluster, namespace: string, name: string): Promise<string> {
  return waitUntil(
    `a holder of Lease ${namespace}/${name}`,
    async () => {
      const holder = await cluster
        .kubectl(["-n", namespace, "get", "lease", name, "-o", "jsonpath={.spec.holderIdentity}"])
        .catch(() => "");
      return holder.trim() || undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
}

/**
 * Waits until the receiver of `receiver` logged each of `events` for every commit, then until nothing
 * more arrives for 10 s (so that a delivery sent twice would be there), and returns its whole log.
 */
export async function deliveredRollouts(
  cluster: Cluster,
  receiver: string,
  commits: string[],
  events: string[],
): Promise<LoggedDelivery[]> {
  const wanted = commits.flatMap((commit) => events.map((event) => `${commit} ${event}`));
  await waitUntil(
    `${wanted.length} deliveries`,
    async () => {
      const seen = new Set(
        (await receiverDeliveries(cluster, receiver)).map(
          (d) => `${eventOf(d).payload.commit_sha} ${d.event}`,
        ),
      );
      return wanted.every((key) => seen.has(key)) ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 1_000 },
  );
  let count = -1;
  let steadySince = Date.now();
  return waitUntil(
    "the receiver's log to settle",
    async () => {
      const all = await receiverDeliveries(cluster, receiver);
      if (all.length !== count) [count, steadySince] = [all.length, Date.now()];
      return Date.now() - steadySince >= 10_000 ? all : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
}

/**
 * Every event of the rollouts of `commits` in `all` arrived once, signed with the example Webhook's
 * secret; with `inOrder`, each rollout's events arrived in the order they happened (docs/deliveries.md,
 * Order per rollout: the receiver logs each request as it arrives).
 */
export function expectEachOnceSigned(
  all: LoggedDelivery[],
  commits: string[],
  events: string[],
  { inOrder }: { inOrder: boolean },
): void {
  const ofBurst = all.filter((d) => commits.includes(eventOf(d).payload.commit_sha ?? ""));
  const perEvent = new Map<string, number>();
  for (const delivery of ofBurst)
    perEvent.set(eventOf(delivery).id, (perEvent.get(eventOf(delivery).id) ?? 0) + 1);
  expect(
    [...perEvent.values()].filter((n) => n > 1),
    "events delivered more than once",
  ).toEqual([]);
  expect(ofBurst).toHaveLength(commits.length * events.length);
  for (const delivery of ofBurst) expect(signedWith("demo-signing-secret-change-me", delivery)).toBe(true);
  if (!inOrder) return;
  const arrived = (commit: string) =>
    ofBurst.filter((d) => eventOf(d).payload.commit_sha === commit).map((d) => d.event);
  expect(
    commits
      .filter((commit) => arrived(commit).join() !== events.join())
      .map((commit) => [commit, arrived(commit)]),
    "rollouts whose events arrived out of order",
  ).toEqual([]);
}
