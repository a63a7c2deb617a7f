import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, useCluster } from "../support/cluster.js";
import { chartDir } from "../support/monitoring-files.js";
import { receiverDeliveries } from "../support/node-cluster.js";
import { installNodeRelease, type NodeRelease, removeNodeRelease } from "../support/node-workloads.js";
import { eventOf, type LoggedDelivery, signedWith } from "../support/receiver-log.js";
import { waitUntil } from "../support/wait.js";

// StatefulSets and DaemonSets of real pods on a real node, the operator running from its image as the
// chart installs it: each kind rolled twice (created, ready, succeeded per rollout), and one of each
// that never becomes ready (a readiness probe that never passes; an image that is not there) fails at
// the progress deadline its annotation sets. A second Webhook, filtered to DaemonSets labelled
// tier=agent, gets those rollouts' events and nothing else (docs/kubernetes.md, filters).

const namespace = "wo-kinds";
const receiver = "wo-kinds-receiver";
const agentsReceiver = "wo-kinds-agents";
const project = "wo-kinds-apps";
const full = ["deployment.created", "deployment.ready", "deployment.succeeded"];
const failed = ["deployment.created", "deployment.failed"];

let cluster: Cluster;
let chart: ChartRelease;

const release: NodeRelease = {
  chartDir,
  sets: [
    "replicaCount=1",
    `config.delivery.allowedDestinations={.${receiver}.svc.cluster.local,.${agentsReceiver}.svc.cluster.local}`,
  ],
  project,
  receivers: [receiver, agentsReceiver],
};

beforeAll(async () => {
  cluster = useCluster();
  chart = chartRelease(cluster, "wo-kinds", namespace);
  await installNodeRelease(cluster, chart, release);
  await cluster.kubectl(["apply", "-f", "-"], agentsOnlyWebhook);
  await cluster.kubectl([
    ...["-n", project, "wait", "--for=condition=Ready", "webhooks.webhook-operator.io/agents-only"],
    "--timeout=180s",
  ]);
});

/**
 * Only the rollouts of DaemonSets labelled tier=agent, to a receiver of their own, signed with the
 * Secret declareWebhook made (the receiver answers 401 to a signature it cannot check, and the retry
 * policy would send each event again).
 */
const agentsOnlyWebhook = JSON.stringify({
  apiVersion: "webhook-operator.io/v1alpha1",
  kind: "Webhook",
  metadata: { name: "agents-only", namespace: project },
  spec: {
    url: `http://webhook-receiver.${agentsReceiver}.svc.cluster.local:8080/hooks`,
    events: ["deployment.created", "deployment.ready", "deployment.succeeded", "deployment.failed"],
    retryPolicy: { maxAttempts: 3 },
    secretRef: { name: "demo-webhook-signing", key: "secret" },
    filters: { labelSelector: { matchLabels: { tier: "agent" } }, kinds: ["DaemonSet"] },
  },
});

afterAll(() => removeNodeRelease(cluster, chart, release));

interface PodOptions {
  commit: string;
  /** A readiness probe on a port nothing listens on: Running, never Ready. */
  neverReady?: boolean;
  /** An image the node does not have and may not pull. */
  missingImage?: boolean;
}

function podTemplate(name: string, options: PodOptions) {
  return {
    metadata: { labels: { app: name }, annotations: { "webhook-operator.io/commit-sha": options.commit } },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: "app",
          image: options.missingImage ? "registry.invalid/missing:1" : "registry.k8s.io/pause:3.10",
          imagePullPolicy: options.missingImage ? "Never" : "IfNotPresent",
          resources: { requests: { cpu: "1m" } },
          readinessProbe: options.neverReady
            ? { tcpSocket: { port: 9 }, periodSeconds: 1, failureThreshold: 1 }
            : undefined,
        },
      ],
    },
  };
}

const deadline = (seconds?: number) =>
  seconds === undefined ? {} : { "webhook-operator.io/progress-deadline-seconds": String(seconds) };

const statefulSet = (name: string, options: PodOptions, deadlineSeconds?: number) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, namespace: project, annotations: deadline(deadlineSeconds) },
    spec: {
      replicas: 2,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: podTemplate(name, options),
    },
  });

const daemonSet = (
  name: string,
  options: PodOptions,
  deadlineSeconds?: number,
  labels?: Record<string, string>,
) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name, namespace: project, labels, annotations: deadline(deadlineSeconds) },
    spec: { selector: { matchLabels: { app: name } }, template: podTemplate(name, options) },
  });

/** The deliveries of `commit`, once all of `events` arrived; each must have arrived once, validly signed. */
async function deliveredOnce(commit: string, events: string[]): Promise<LoggedDelivery[]> {
  const ofCommit = await waitUntil(
    `${events.join(", ")} of ${commit}`,
    async () => {
      const all = (await receiverDeliveries(cluster, receiver)).filter(
        (d) => eventOf(d).payload.commit_sha === commit,
      );
      return events.every((event) => all.some((d) => d.event === event)) ? all : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1_000 },
  );
  expect(ofCommit.map((d) => d.event).sort()).toEqual([...events].sort());
  for (const delivery of ofCommit) expect(signedWith("demo-signing-secret-change-me", delivery)).toBe(true);
  return ofCommit;
}

describe("StatefulSets and DaemonSets of real pods", () => {
  it("a StatefulSet: created, ready, succeeded, and again for a new template", async () => {
    await cluster.kubectl(["apply", "-f", "-"], statefulSet("db", { commit: "db-1" }));
    const first = await deliveredOnce("db-1", full);
    await cluster.kubectl(["apply", "-f", "-"], statefulSet("db", { commit: "db-2" }));
    const second = await deliveredOnce("db-2", full);
    // Two rollouts: two deployments of the API.
    expect(new Set([...first, ...second].map((d) => eventOf(d).payload.deployment_id)).size).toBe(2);
    const succeeded = second.find((d) => d.event === "deployment.succeeded");
    expect(succeeded && eventOf(succeeded).payload).toMatchObject({ status: "succeeded" });
  });

  it("a DaemonSet: created, ready, succeeded, and again for a new template", async () => {
    await cluster.kubectl(
      ["apply", "-f", "-"],
      daemonSet("agent", { commit: "agent-1" }, undefined, { tier: "agent" }),
    );
    await deliveredOnce("agent-1", full);
    await cluster.kubectl(
      ["apply", "-f", "-"],
      daemonSet("agent", { commit: "agent-2" }, undefined, { tier: "agent" }),
    );
    await deliveredOnce("agent-2", full);
  });

  it("a StatefulSet whose pods never pass their readiness probe: created, then failed at its deadline", async () => {
    await cluster.kubectl(
      ["apply", "-f", "-"],
      statefulSet("never-ready", { commit: "never-ready-1", neverReady: true }, 15),
    );
    const deliveries = await deliveredOnce("never-ready-1", failed);
    const failure = deliveries.find((d) => d.event === "deployment.failed");
    expect(failure && JSON.parse(failure.body).payload).toMatchObject({
      status: "failed",
      url: null,
      error_message: expect.stringMatching(/^StatefulSet "never-ready" made no progress for 15 seconds/),
    });
  });

  it("a DaemonSet whose image does not exist: created, then failed at its deadline", async () => {
    await cluster.kubectl(
      ["apply", "-f", "-"],
      daemonSet("no-image", { commit: "no-image-1", missingImage: true }, 15),
    );
    const deliveries = await deliveredOnce("no-image-1", failed);
    const failure = deliveries.find((d) => d.event === "deployment.failed");
    expect(failure && JSON.parse(failure.body).payload.error_message).toMatch(
      /^DaemonSet "no-image" made no progress for 15 seconds.*0 of 1 available\.$/,
    );
  });
  it("a Webhook filtered to DaemonSets labelled tier=agent got their rollouts' events and no other", async () => {
    const agents = ["agent-1", "agent-2"];
    // Every rollout above has been delivered to the unfiltered receiver by now; the filtered one gets
    // the agent DaemonSet's, then nothing more for 10 s (anything filtered in by mistake would show).
    let count = -1;
    let steadySince = Date.now();
    const got = await waitUntil(
      "the filtered receiver's log to hold both agent rollouts and settle",
      async (saw) => {
        const all = await receiverDeliveries(cluster, agentsReceiver);
        saw(all.map((d) => `${eventOf(d).payload.commit_sha} ${d.event}`));
        if (all.length !== count) [count, steadySince] = [all.length, Date.now()];
        const complete = agents.every((commit) =>
          full.every((event) =>
            all.some((d) => d.event === event && eventOf(d).payload.commit_sha === commit),
          ),
        );
        return complete && Date.now() - steadySince >= 10_000 ? all : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    expect(got.map((d) => `${eventOf(d).payload.commit_sha} ${d.event}`).sort()).toEqual(
      agents.flatMap((commit) => full.map((event) => `${commit} ${event}`)).sort(),
    );
  });
});
