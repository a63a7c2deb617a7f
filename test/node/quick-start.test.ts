import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { type Cluster, useCluster } from "../support/cluster.js";
import { docBlock } from "../support/docs.js";
import { auditLog, pathWithTools, podsOf, receiverDeliveries } from "../support/node-cluster.js";
import { eventOf, type LoggedDelivery, signedWith } from "../support/receiver-log.js";
import { commandsOf, Terminal } from "../support/terminal.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";

// The quick start of docs/kubernetes.md, typed into a terminal one command at a time, as a person
// would, on the suite's real node: the chart installed with its default values (the images it names
// are the ones `npm run image` built, imported into the node), the example Webhook and receiver, the
// example Deployment rolled three times, the API through a port-forward. After each command the test
// checks what the page says happens; then the operator's log holds no 403 and its writes came from
// its pods, as its ServiceAccount. The page's uninstall steps run last: what is left is what it lists.

const commands = commandsOf(docBlock("## Quick start with kind"));
const uninstall = docBlock("## Uninstall");
const manifest = (file: string) =>
  parseAllDocuments(readFileSync(path.join(repoRoot, "manifests/examples", file), "utf8")).map((document) =>
    document.toJS(),
  );
const secret: string = manifest("webhook.yaml").find((o) => o.kind === "Secret").stringData.secret;
const firstCommit: string =
  manifest("deployment.yaml")[0].spec.template.metadata.annotations["webhook-operator.io/commit-sha"];

// What kind and docker do on a laptop, the suite has done before this file: its control plane and
// node (test/support/node-setup.ts), and the image `npm run image` built, imported into the node.
const doneBySuite = [
  /^kind create cluster /,
  /^docker build -t webhook-operator:\S+ \.$/,
  /^kind load docker-image /,
];

let cluster: Cluster;
let terminal: Terminal;
let helmInstallStarted = 0;
/** The operator pods' addresses after each command: `helm upgrade` replaces its pods. */
const operatorIPs = new Set<string>();

const rolloutOf = async (commit: string, events: string[]) =>
  waitUntil(
    `the receiver logging ${events.join(", ")} of commit ${commit}`,
    async () => {
      const deliveries = (await receiverDeliveries(cluster, "demo-receiver")).filter(
        (d) => eventOf(d).payload.commit_sha === commit,
      );
      const seen = deliveries.map((d) => d.event);
      return events.every((event) => seen.includes(event)) ? deliveries : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );

function expectOnceEachSigned(deliveries: LoggedDelivery[], events: string[]) {
  expect(deliveries.map((d) => d.event).sort()).toEqual([...events].sort());
  for (const delivery of deliveries) {
    expect(delivery.signature, delivery.event).toBe("valid");
    expect(signedWith(secret, delivery), `${delivery.event}: the HMAC computed here`).toBe(true);
  }
  expect(new Set(deliveries.map((d) => eventOf(d).payload.deployment_id)).size).toBe(1);
}

/** What the page says each command does, checked after it ran (commands not listed print only). */
const afterwards: Array<[RegExp, (output: string, command: string) => Promise<void>]> = [
  [
    /^helm install /,
    async () => {
      for (const selector of [
        "app.kubernetes.io/component=operator",
        "app.kubernetes.io/component=database",
      ]) {
        const pods = await podsOf(cluster, "webhook-operator", selector);
        expect(pods.length, selector).toBeGreaterThan(0);
        for (const pod of pods) {
          expect(pod.spec.nodeName).toBe("node-0");
          expect(pod.spec.containers[0]?.readinessProbe, pod.metadata.name).toBeDefined();
          expect(pod.ready, pod.metadata.name).toBe(true);
        }
      }
      console.log(`helm install to Ready: ${((Date.now() - helmInstallStarted) / 1000).toFixed(1)} s`);
    },
  ],
  [
    /apply -f manifests\/examples\/receiver.yaml/,
    async () => {
      await cluster.kubectl(["-n", "demo-receiver", "rollout", "status", "deployment/webhook-receiver"]);
    },
  ],
  [
    /get wh/,
    async (output, command) => {
      expect(output).toMatch(/^NAME\s+URL/m);
      await waitUntil(
        "the Webhook READY True",
        async () => {
          const { output: again } = await terminal.run(command);
          return /\bTrue\b/.test(again) ? true : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    },
  ],
  [
    /apply -f manifests\/examples\/deployment.yaml/,
    async () => {
      const events = ["deployment.created", "deployment.ready", "deployment.succeeded"];
      expectOnceEachSigned(await rolloutOf(firstCommit, events), events);
    },
  ],
  [
    /--type merge .*commit-sha/,
    async (_, command) => {
      const commit = /commit-sha":"(\w+)"/.exec(command)?.[1] ?? "";
      const events = ["deployment.created", "deployment.ready", "deployment.succeeded"];
      expectOnceEachSigned(await rolloutOf(commit, events), events);
    },
  ],
  [
    /--type json .*readinessProbe/,
    async () => {
      // The same commit as the rollout before: the third rollout is the one with a new deployment id.
      const deliveries = await waitUntil(
        "deployment.failed of the third rollout",
        async () => {
          const all = await receiverDeliveries(cluster, "demo-receiver");
          const ids = [...new Set(all.map((d) => eventOf(d).payload.deployment_id))];
          const third = all.filter((d) => eventOf(d).payload.deployment_id === ids[2]);
          return third.some((d) => d.event === "deployment.failed") ? third : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 1_000 },
      );
      expectOnceEachSigned(deliveries, ["deployment.created", "deployment.failed"]);
    },
  ],
  [
    /^kubectl .*port-forward .* &$/,
    async (_, command) => {
      const port = Number(/ (\d+):\d+ &$/.exec(command)?.[1]);
      await waitUntil(
        `the port-forward listening on ${port}`,
        async () => ((await canConnect(port)) ? true : undefined),
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    },
  ],
  [
    /^kubectl -n demo get deliveries\b/,
    async (output) => {
      // The three rollouts' events, recorded before this command: created, ready and succeeded twice,
      // then created and failed, each delivered once (200 from the receiver). An attempt may have
      // failed before it (the receiver's Service not yet routing): a row of its own, then retried.
      const rows = output.trim().split("\n");
      const wide = await cluster.kubectl(["-n", "demo", "get", "deliveries,rollouts", "-o", "wide"]);
      expect(rows[0]).toMatch(/^NAME\s+WEBHOOK\s+EVENT\s+OUTCOME\s+STATUS CODE\s+ATTEMPT\s+AGE$/);
      const attempts = rows.slice(1).map((row) => row.split(/\s+/));
      const delivered = attempts.filter(
        ([, , , outcome, status]) => outcome === "succeeded" && status === "200",
      );
      expect(delivered.map(([, , event]) => event).sort(), wide).toEqual(
        [
          "deployment.created",
          "deployment.created",
          "deployment.created",
          "deployment.failed",
          "deployment.ready",
          "deployment.ready",
          "deployment.succeeded",
          "deployment.succeeded",
        ].sort(),
      );
      for (const [, , event, outcome] of attempts.filter((row) => !delivered.includes(row)))
        expect(`${event} ${outcome}`, wide).toMatch(/ failed$/);
    },
  ],
  [
    /^kubectl -n demo get rollouts\b/,
    async (output) => {
      expect(output).toMatch(/^NAME\s+WORKLOAD\s+REVISION\s+ENVIRONMENT\s+PHASE\s+EVENTS\s+AGE$/m);
      const phases = output
        .trim()
        .split("\n")
        .slice(1)
        .map((row) => row.split(/\s+/)[4]);
      expect(phases.sort()).toEqual(["failed", "succeeded", "succeeded"]);
    },
  ],
  [
    /^curl .*\/api\/projects/,
    async (output) => {
      // The port-forward in the background prints "Handling connection for 8080" among it.
      const json = output.split("\n").find((line) => line.startsWith("{")) ?? output;
      const { projects } = JSON.parse(json) as { projects: { slug: string }[] };
      expect(projects.map((p) => p.slug)).toContain("demo");
    },
  ],
];

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

beforeAll(async () => {
  cluster = useCluster();
  terminal = new Terminal({
    cwd: repoRoot,
    env: {
      PATH: pathWithTools(),
      HOME: await mkdtemp(path.join(tmpdir(), "wo-quick-start-home-")),
      KUBECONFIG: cluster.kubeconfigPath,
    },
  });
});

// Each file leaves the node as it found it before the next starts (its namespaces gone, not going):
// pods still being torn down beside the next file's rollouts once held one of them up for minutes.
afterAll(async () => {
  terminal?.close();
  await cluster.kubectl([
    "delete",
    "namespace",
    "demo",
    "demo-receiver",
    "webhook-operator",
    "--ignore-not-found",
    "--timeout=300s",
  ]);
});

describe("docs/kubernetes.md, Quick start with kind, on a real node", () => {
  it("leaves to the suite only what kind and docker do", () => {
    const skipped = commands.filter((command) => doneBySuite.some((pattern) => pattern.test(command)));
    expect(skipped).toHaveLength(doneBySuite.length);
    // The image the page builds is the one the chart runs by default, as `npm run image` tags it.
    const chart = readFileSync(path.join(repoRoot, "charts/webhook-operator/Chart.yaml"), "utf8");
    const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(chart)?.[1];
    expect(skipped[1]).toContain(`webhook-operator:${appVersion} `);
  });

  let failed = false;
  for (const command of commands.filter((c) => !doneBySuite.some((pattern) => pattern.test(c)))) {
    it(`$ ${command}`, async () => {
      if (failed) throw new Error("not run: a command before it failed");
      try {
        if (command.startsWith("helm install ")) helmInstallStarted = Date.now();
        const { output, status } = await terminal.run(command);
        expect(status, `${command}\n${output}`).toBe(0);
        for (const [pattern, check] of afterwards) if (pattern.test(command)) await check(output, command);
        for (const pod of await podsOf(cluster, "webhook-operator", "app.kubernetes.io/component=operator"))
          if (pod.status.podIP) operatorIPs.add(pod.status.podIP);
      } catch (error) {
        failed = true;
        throw error;
      }
    });
  }

  it("ran the operator in its pods with no 403, writing as its ServiceAccount through the kubernetes Service", async () => {
    const log = await cluster.kubectl([
      "-n",
      "webhook-operator",
      "logs",
      "-l",
      "app.kubernetes.io/component=operator",
      "--tail=-1",
      "--prefix",
    ]);
    expect(log).toContain("leader");
    expect(log).not.toMatch(/\b403\b|forbidden/i);
    const pods = await podsOf(cluster, "webhook-operator", "app.kubernetes.io/component=operator");
    const podIPs = new Set([...operatorIPs, ...pods.map((pod) => pod.status.podIP)]);
    // Every write of the Lease and of Webhooks but the person's own `kubectl apply`.
    const writes = auditLog(cluster).filter(
      (entry) =>
        (entry.objectRef.namespace === "webhook-operator" || entry.objectRef.resource === "webhooks") &&
        entry.user.username !== "admin" &&
        Date.parse(entry.requestReceivedTimestamp) >= helmInstallStarted,
    );
    expect(writes.map((w) => w.objectRef.subresource ?? w.objectRef.resource)).toEqual(
      expect.arrayContaining(["leases", "status"]),
    );
    for (const write of writes) {
      expect(write.user.username).toBe("system:serviceaccount:webhook-operator:webhook-operator");
      expect(
        podIPs.has(write.sourceIPs[0]),
        `${write.verb} ${write.objectRef.resource} from ${write.sourceIPs[0]}`,
      ).toBe(true);
    }
  });
});

describe("docs/kubernetes.md, Uninstall", () => {
  // The objects the page lists as kept ("#   secret/…" lines under its `kubectl get`).
  const listed = [...uninstall.matchAll(/^#\s+(\S+\/\S+)$/gm)].map((m) => m[1]).sort();

  it.each(commandsOf(uninstall))("$ %s", async (command) => {
    const { output, status } = await terminal.run(command);
    expect(status, `${command}\n${output}`).toBe(0);
    if (command.includes(" get ")) expect(output.trim().split("\n").sort()).toEqual(listed);
  });

  it("leaves nothing else of the release but the namespace's own objects and the CRD", async () => {
    const types = (await cluster.kubectl(["api-resources", "--namespaced", "--verbs=list", "-o", "name"]))
      .trim()
      .split("\n")
      .filter((type) => !/^events(\.events\.k8s\.io)?$/.test(type));
    // Kubernetes' own in every namespace: its default ServiceAccount and the cluster's CA bundle.
    const kubernetesOwn = ["serviceaccount/default", "configmap/kube-root-ca.crt"];
    const leftOver = async () =>
      (await cluster.kubectl(["-n", "webhook-operator", "get", types.join(","), "-o", "name"]))
        .trim()
        .split("\n")
        .filter((name) => !kubernetesOwn.includes(name))
        .sort();
    // The pods stop within their grace period (SIGTERM: sends in flight finish first).
    await waitUntil(
      "the release's pods gone",
      async () => ((await leftOver()).some((name) => name.startsWith("pod/")) ? undefined : true),
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect(await leftOver()).toEqual(listed);
    const clusterWide = await cluster.kubectl([
      "get",
      "clusterroles,clusterrolebindings",
      "-l",
      "app.kubernetes.io/instance=webhook-operator",
      "-o",
      "name",
    ]);
    expect(clusterWide.trim()).toBe("");
    await cluster.kubectl(["get", "crd", "webhooks.webhook-operator.io"]);
  });
});
