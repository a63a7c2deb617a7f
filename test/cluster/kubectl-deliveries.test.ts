import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hostAddress,
  kubectlBinary,
  registerAggregatedApi,
  servingCertificate,
  unregisterAggregatedApi,
} from "../support/aggregated-api.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  kubectlAt,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createToken } from "../support/cluster-identities.js";
import { deploymentManifest, openGate, operatorEnv } from "../support/cluster-rollouts.js";
import { freePort } from "../support/ports.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, waitForReady } from "../support/webhook-resources.js";

// `kubectl get deliveries`: the operator's aggregated API behind the real API server's aggregation
// layer (scripts/cluster/start.sh configures it as kubeadm does), authorised by the real RBAC.

let cluster: Cluster;
let service: TestService;
let receiver: Receiver;
let aggregatedApiPort: number;
const label = uniqueName("kubectl-dlv");
const shop = uniqueName("shop");
const other = uniqueName("other");
const apiService = { namespace: shop, name: "webhook-operator-aggregated" };
const readRole = uniqueName("read-deliveries");

const kubectl = (args: string[], input?: string) => cluster.kubectl(args, input);
/**
 * A table's rows, below its header: only whole lines. kubectl --watch writes a row as it comes, and
 * its output may be read in the middle of one (a row cut after its event's name once passed for
 * whole under load).
 */
const rowsOf = (table: string) =>
  table
    .slice(0, table.lastIndexOf("\n") + 1)
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "");

/** The shop namespace's deliveries as `kubectl get -o name` lists them. */
async function deliveryNames(namespace: string, ...args: string[]): Promise<string[]> {
  const names = await kubectl(["-n", namespace, "get", "deliveries", "-o", "name", ...args]);
  return names.split("\n").filter((name) => name !== "");
}

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, shop, other);
  receiver = await startReceiver();
  const tls = await servingCertificate(cluster, apiService);
  const port = await freePort();
  aggregatedApiPort = port;
  service = await startTestService(
    {
      ...operatorEnv(label),
      // The API server reaches the aggregated API at the machine's own address.
      HOST: "0.0.0.0",
      AGGREGATED_API_PORT: String(port),
      AGGREGATED_API_CERT_FILE: tls.certFile,
      AGGREGATED_API_KEY_FILE: tls.keyFile,
      KUBERNETES_TOKEN_CACHE_TTL_MS: "0",
    },
    { kubeConfig: cluster.kubeConfig() },
  );
  await registerAggregatedApi(cluster, apiService, {
    address: await hostAddress(),
    port,
    caBundle: tls.caBundle,
  });
  for (const namespace of [shop, other]) {
    await createWebhook(cluster, namespace, "all-deploys", {
      url: `${receiver.url}/hook`,
      events: ["deployment.created", "deployment.ready", "deployment.succeeded"],
    });
    await waitForReady(cluster, namespace, "all-deploys", "True");
  }
  // What the chart's read role grants (the other ClusterRole replays: create deliveryreplays).
  await kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: readRole },
      rules: [
        {
          apiGroups: ["deliveries.webhook-operator.io"],
          resources: ["deliveries", "rollouts"],
          verbs: ["get", "list", "watch"],
        },
      ],
    }),
  );
}, 180_000);

afterAll(async () => {
  await unregisterAggregatedApi(cluster).catch(() => {});
  await kubectl(["delete", "clusterrole", readRole, "--ignore-not-found"]).catch(() => {});
  await service?.close();
  await receiver?.close();
  await deleteNamespaces(cluster, label);
}, 240_000);

describe("kubectl get deliveries", () => {
  it("--watch sees a rollout's three attempts arrive as they are recorded", async () => {
    const gate = uniqueName("gate");
    await cluster.apps.createNamespacedDeployment({
      namespace: shop,
      body: deploymentManifest("web", { replicas: 1, gate }),
    });
    const watch = spawnKubectl(["-n", shop, "get", "deliveries", "--watch"]);
    try {
      // Held at its gate, the rollout has only been created: its first attempt is what the watch shows.
      await waitUntil(
        "the watch to show deployment.created",
        async (saw) => {
          saw(watch.output());
          return /deployment\.created/.test(watch.output()) ? true : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      expect(watch.output()).not.toMatch(/deployment\.ready/);
      await openGate(cluster, gate);
      // The watch was open before these attempts existed: they can only come through it.
      const lines = await waitUntil(
        "the watch to show ready and succeeded",
        async (saw) => {
          saw(watch.output());
          const rows = rowsOf(watch.output());
          return rows.length >= 3 && rows.some((row) => /deployment\.succeeded/.test(row)) ? rows : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      expect(lines.map((line) => line.split(/\s+/)[2])).toEqual([
        "deployment.created",
        "deployment.ready",
        "deployment.succeeded",
      ]);
      // Line by line, so that a line that does not match is printed.
      for (const line of lines) expect(line).toMatch(/\ball-deploys\s+\S+\s+succeeded\s+200\s+1(\s|$)/);
      expect(watch.output().split("\n")[0]).toMatch(
        /^NAME\s+WEBHOOK\s+EVENT\s+OUTCOME\s+STATUS CODE\s+ATTEMPT\s+AGE$/,
      );
    } finally {
      watch.stop();
    }
  });

  it("-l and --field-selector select by event, outcome and webhook; a set-based selector is a 400", async () => {
    const ready = await deliveryNames(shop, "-l", "event=deployment.ready");
    expect(ready).toHaveLength(1);
    const object = JSON.parse(await kubectl(["-n", shop, "get", ready[0] ?? "", "-o", "json"]));
    expect(object).toMatchObject({
      apiVersion: "deliveries.webhook-operator.io/v1alpha1",
      kind: "Delivery",
      metadata: {
        namespace: shop,
        labels: { webhook: "all-deploys", event: "deployment.ready", outcome: "succeeded" },
      },
      spec: { webhook: "all-deploys", event: "deployment.ready", attempt: 1 },
      status: { outcome: "succeeded", statusCode: 200 },
    });
    expect(object.metadata.resourceVersion).toBe(object.metadata.name);
    expect(await deliveryNames(shop, "--field-selector", "status.outcome=failed")).toEqual([]);
    expect(await deliveryNames(shop, "-l", "webhook=all-deploys,event!=deployment.ready")).toHaveLength(2);
    await expect(
      kubectl(["-n", shop, "get", "deliveries", "-l", "event in (deployment.ready)"]),
    ).rejects.toThrow(/BadRequest|only key=value, key==value and key!=value/);
  });
});

describe("kubectl get rollouts", () => {
  it("lists the rollout with its phase and the events it emitted, and selects by workload", async () => {
    const table = await kubectl(["-n", shop, "get", "rollouts", "-l", "workload=web"]);
    const [row = ""] = rowsOf(table);
    expect(row.split(/\s+/).slice(1, 6)).toEqual([
      "web",
      "1",
      "production",
      "succeeded",
      "created,ready,succeeded",
    ]);
    const [name = ""] = row.split(/\s+/);
    const rollout = JSON.parse(await kubectl(["-n", shop, "get", "rollout", name, "-o", "json"]));
    expect(rollout).toMatchObject({
      kind: "Rollout",
      metadata: {
        name,
        namespace: shop,
        labels: { workload: "web", kind: "Deployment", phase: "succeeded" },
      },
      spec: { workload: { kind: "Deployment", name: "web" }, revision: "1" },
      status: {
        phase: "succeeded",
        events: ["deployment.created", "deployment.ready", "deployment.succeeded"],
      },
    });
    // The rollout's attempts are selected by its name.
    expect(await deliveryNames(shop, "-l", `rollout=${name}`)).toHaveLength(3);
  });
});

describe("paging and replays", () => {
  it("--chunk-size pages through a few thousand attempts by continue tokens, each once", async () => {
    const before = await deliveryNames(shop);
    await seedAttempts(shop, 3_000);
    const paged = await kubectlAt(cluster.kubeconfigPath, [
      "-n",
      shop,
      "get",
      "deliveries",
      "-o",
      "name",
      "--chunk-size=500",
      "-v=6",
    ]);
    const names = paged.stdout.split("\n").filter((name) => name !== "");
    expect(names).toHaveLength(before.length + 3_000);
    expect(new Set(names).size).toBe(names.length);
    // Newest first: the rollout's attempts (recorded last) lead, the seeded history follows.
    expect(names.slice(0, before.length)).toEqual(before);
    const requests = paged.stderr
      .split("\n")
      .filter((line) => /verb="GET" url="https:\S+\/deliveries\?/.test(line));
    expect(requests.length).toBe(Math.ceil(names.length / 500));
    expect(requests.slice(1).every((line) => /continue=/.test(line))).toBe(true);
  });

  it("kubectl create of a DeliveryReplay sends the delivery once, and the API server's audit log records who asked", async () => {
    const [ready = ""] = await deliveryNames(shop, "-l", "event=deployment.ready");
    const id = ready.split("/")[1] ?? "";
    const sent = receiver.requests.length;
    // A server-side dry run is checked and sends nothing.
    await kubectl(["-n", shop, "create", "--dry-run=server", "-f", "-"], replayManifest(id));
    const created = JSON.parse(
      await kubectl(["-n", shop, "create", "-o", "json", "-f", "-"], replayManifest(id)),
    );
    expect(created).toMatchObject({
      kind: "DeliveryReplay",
      spec: { delivery: id },
      status: { outcome: "succeeded", statusCode: 200, attempt: 2 },
    });
    expect(receiver.requests.length).toBe(sent + 1);
    const { rows } = await service.pool.query<{ attempts: number }>(
      "SELECT count(*)::int AS attempts FROM deliveries WHERE event_id = (SELECT event_id FROM deliveries WHERE id = $1)",
      [id],
    );
    expect(rows[0]?.attempts).toBe(2);
    // The API server records the create (it proxies the body unread, so the audit names who asked,
    // where and the answer, not the delivery); the server-side dry run is recorded as such.
    const replays = await waitUntil("the replays in the audit log", async (saw) => {
      const entries = readFileSync(path.join(cluster.dir, "logs/audit.log"), "utf8")
        .split("\n")
        .filter((line) => line.includes('"resource":"deliveryreplays"'))
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.objectRef?.namespace === shop && entry.user?.username === "admin");
      saw(entries);
      return entries.length >= 2 ? entries : undefined;
    });
    expect(
      replays.map((entry) => [entry.verb, /dryRun=All/.test(entry.requestURI), entry.responseStatus?.code]),
    ).toEqual([
      ["create", true, 201],
      ["create", false, 201],
    ]);
    expect(replays[1]).toMatchObject({
      level: "Metadata",
      objectRef: { resource: "deliveryreplays", namespace: shop, apiGroup: "deliveries.webhook-operator.io" },
    });
  });
});

describe("authorisation", () => {
  it("a ServiceAccount bound to the read role lists its namespace's deliveries; elsewhere the API server refuses it", async () => {
    await kubectl(["-n", shop, "create", "serviceaccount", "reader"]);
    await kubectl([
      "-n",
      shop,
      "create",
      "rolebinding",
      "reader",
      `--clusterrole=${readRole}`,
      `--serviceaccount=${shop}:reader`,
    ]);
    const asReader = await tokenKubeconfig(await createToken(cluster, shop, "reader"));
    const own = await kubectlAt(asReader, ["-n", shop, "get", "deliveries", "-o", "name"]);
    expect(own.stdout.trim().split("\n")).toEqual(await deliveryNames(shop));
    // Refused by the API server's RBAC: the request never reaches the operator, so the message is the
    // API server's own, without the operator's "(refused by webhook-operator's aggregated API)".
    const refused = await kubectlAt(asReader, ["-n", other, "get", "deliveries"]).catch(
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toContain(
      `Error from server (Forbidden): deliveries.deliveries.webhook-operator.io is forbidden: User "system:serviceaccount:${shop}:reader" cannot list resource "deliveries"`,
    );
    expect(refused).not.toContain("webhook-operator's aggregated API");
    const replay = await kubectlAt(asReader, ["-n", shop, "create", "-f", "-"], replayManifest("1")).catch(
      (error: { stderr: string }) => error.stderr,
    );
    expect(replay).toContain('cannot create resource "deliveryreplays"');
  });

  it("the operator asks the API server itself (SubjectAccessReview): a front-proxy request for a user without rights is refused by the operator", async () => {
    // Only the front proxy's certificate can name a user, so this request is made as the aggregation
    // layer would make it; RBAC gives "nobody" nothing, and the operator's own review says so.
    const port = aggregatedApiPort;
    const answer = await frontProxyGet(
      port,
      `/apis/deliveries.webhook-operator.io/v1alpha1/namespaces/${shop}/deliveries`,
      "nobody",
    );
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
    expect(JSON.parse(answer.body).message).toContain("(refused by webhook-operator's aggregated API)");
    const unnamed = await frontProxyGet(
      port,
      `/apis/deliveries.webhook-operator.io/v1alpha1/namespaces/${shop}/deliveries`,
      "admin",
      false,
    );
    expect(unnamed.status).toBe(401);
  });
});

/** Finished attempts of the namespace's webhook, older than everything else (a history to page through). */
async function seedAttempts(namespace: string, count: number): Promise<void> {
  await service.pool.query(
    `WITH w AS (SELECT w.id, w.project_id FROM webhooks w JOIN projects p ON p.id = w.project_id WHERE p.slug = $1),
          e AS (INSERT INTO events (id, project_id, event_type, envelope, created_at)
                SELECT gen_random_uuid(), (SELECT project_id FROM w), 'deployment.created', '{}',
                       now() - interval '1 day' + i * interval '1 millisecond'
                  FROM generate_series(1, $2::int) i
                RETURNING id, event_type, created_at)
     INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, state, success, status_code,
                             response_body, created_at, delivered_at)
     SELECT (SELECT id FROM w), e.id, e.event_type, 1, 'done', true, 200, 'ok', e.created_at, e.created_at FROM e`,
    [namespace, count],
  );
}

function replayManifest(delivery: string): string {
  return JSON.stringify({
    apiVersion: "deliveries.webhook-operator.io/v1alpha1",
    kind: "DeliveryReplay",
    metadata: { generateName: "replay-" },
    spec: { delivery },
  });
}

async function tokenKubeconfig(token: string): Promise<string> {
  const server = cluster.kubeConfig().getCurrentCluster();
  const file = path.join(cluster.dir, `${uniqueName("token")}.kubeconfig`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: server?.server, "certificate-authority": server?.caFile } }],
      users: [{ name: "u", user: { token } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      "current-context": "c",
    }),
  );
  return file;
}

/** A GET as the aggregation layer makes it: the front proxy's client certificate (or none) and X-Remote-User. */
function frontProxyGet(
  port: number,
  requestPath: string,
  user: string,
  withCertificate = true,
): Promise<{ status: number; body: string }> {
  const pki = (name: string) => readFileSync(path.join(cluster.dir, "pki", name));
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: requestPath,
        headers: { "X-Remote-User": user, "X-Remote-Group": "system:authenticated" },
        rejectUnauthorized: false,
        ...(withCertificate
          ? { cert: pki("front-proxy-client.crt"), key: pki("front-proxy-client.key") }
          : {}),
      },
      (response) => {
        let body = "";
        response.on("data", (chunk) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

function spawnKubectl(args: string[]): { output(): string; stop(): void } {
  let output = "";
  let child: ChildProcess | undefined;
  const started = kubectlBinary().then((binary) => {
    child = spawn(binary, ["--kubeconfig", cluster.kubeconfigPath, ...args]);
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
  });
  return {
    output: () => output,
    stop: () => {
      void started.then(() => child?.kill());
    },
  };
}
