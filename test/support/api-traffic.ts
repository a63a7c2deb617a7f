import type { Cluster } from "./cluster.js";
import { waitUntil } from "./wait.js";

// A steady client of the operator's API inside the cluster, as a CI job or the dashboard would be: a
// pod of the Node image that the suite imports, calling the chart's Service (so kube-proxy picks the
// replica) with the admin key from the chart's Secret, one connection per request. It calls the
// Service's cluster IP, not its DNS name: a name lookup lost to the cluster DNS's own hiccups (glibc
// waits 5 s per lost UDP answer, and undici's 10 s connect bound counts the lookup) would be counted
// as a connection our replicas never answered, which is what the suite measures. Each round lists the
// projects, lists the project's webhooks, creates a disabled webhook and deletes it again. It logs one
// JSON line per failed call and, every round, the running totals; `stop` is a file the test touches.

const script = `
const base = process.env.API_URL, key = process.env.API_KEY, slug = process.env.PROJECT;
const headers = { authorization: "Bearer " + key, "content-type": "application/json", connection: "close" };
const totals = { calls: 0, refused: 0, connectTimeouts: 0, failed: 0, created: 0, deleted: 0 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// When a call was tried again and why: when its failed attempt began (a connection not established
// fails 10 s later) and ended, set beside the replicas' stop times, says which replica it met.
const retried = (code, method, path, began) => console.log(JSON.stringify({ retried: code, call: method + " " + path, began: began.toISOString(), at: new Date().toISOString() }));
// A connection refused or never established (a replica that stopped listening or is gone, before the
// Service forgets it) carried no request: trying again is what any client does, and does nothing twice.
async function call(method, path, body, expected) {
  for (let attempt = 0; ; attempt++) {
    const began = new Date();
    try {
      const response = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
      const text = await response.text();
      totals.calls++;
      if (response.status !== expected) {
        totals.failed++;
        console.log(JSON.stringify({ failed: method + " " + path, status: response.status, body: text.slice(0, 500) }));
        return undefined;
      }
      return text ? JSON.parse(text) : null;
    } catch (error) {
      const code = error.cause?.code ?? error.code;
      if (code === "ECONNREFUSED" && attempt < 20) { totals.refused++; retried(code, method, path, began); await sleep(100); continue; }
      if (code === "UND_ERR_CONNECT_TIMEOUT" && attempt < 20) { totals.connectTimeouts++; retried(code, method, path, began); continue; }
      totals.calls++; totals.failed++;
      console.log(JSON.stringify({ failed: method + " " + path, error: String(error.cause ?? error) }));
      return undefined;
    }
  }
}
let project;
while (!project) {
  const page = await call("GET", "/api/projects?per_page=100", undefined, 200);
  project = page?.projects.find((p) => p.slug === slug);
  if (!project) await sleep(1000);
}
console.log(JSON.stringify({ project: project.id }));
const fs = await import("node:fs");
for (let round = 0; !fs.existsSync("/tmp/stop"); round++) {
  await call("GET", "/api/projects?per_page=100", undefined, 200);
  await call("GET", "/api/projects/" + project.id + "/webhooks", undefined, 200);
  const created = await call("POST", "/api/projects/" + project.id + "/webhooks",
    { url: process.env.HOOK_URL, events: ["deployment.failed"], enabled: false }, 201);
  if (created) {
    totals.created++;
    if ((await call("DELETE", "/api/projects/" + project.id + "/webhooks/" + created.id, undefined, 204)) !== undefined) totals.deleted++;
  }
  console.log(JSON.stringify({ round, ...totals }));
  await sleep(200);
}
console.log(JSON.stringify({ stopped: true, ...totals }));
await sleep(3_600_000);
`;

/** A call tried again: why (ECONNREFUSED or UND_ERR_CONNECT_TIMEOUT), which, and when its failed attempt began and ended. */
export interface ApiRetry {
  retried: string;
  call: string;
  began: string;
  at: string;
}

export interface ApiTotals {
  calls: number;
  /** Connections refused, then tried again. */
  refused: number;
  /** Connections not established within undici's 10 s, then tried again. */
  connectTimeouts: number;
  failed: number;
  created: number;
  deleted: number;
}

/** Starts the client in `namespace` against the chart's Service `<fullname>.<operatorNamespace>`. */
export async function startApiTraffic(
  cluster: Cluster,
  options: {
    namespace: string;
    operatorNamespace: string;
    fullname: string;
    project: string;
    hookUrl: string;
  },
): Promise<{
  /** The totals of the last round so far. */
  totals(): Promise<ApiTotals>;
  /** The totals, the calls that failed, and each call tried again (when, and why). */
  stop(): Promise<{ totals: ApiTotals; failures: string[]; retries: ApiRetry[] }>;
}> {
  const { namespace, operatorNamespace, fullname } = options;
  await cluster.kubectl(["create", "namespace", namespace]);
  const serviceIp = (
    await cluster.kubectl([
      "-n",
      operatorNamespace,
      "get",
      "service",
      fullname,
      "-o",
      "jsonpath={.spec.clusterIP}",
    ])
  ).trim();
  // The key is copied into the client's namespace: a pod reads Secrets of its own namespace only.
  const key = (
    await cluster.kubectl([
      "-n",
      operatorNamespace,
      "get",
      "secret",
      `${fullname}-api-key`,
      "-o",
      "jsonpath={.data.api-key}",
    ])
  ).trim();
  const manifest = [
    { apiVersion: "v1", kind: "Secret", metadata: { name: "api-key", namespace }, data: { key } },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "api-client", namespace },
      data: { "client.mjs": script },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "api-client", namespace },
      spec: {
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: "client",
            image: "node:24-bookworm-slim",
            imagePullPolicy: "Never",
            command: ["node", "/client/client.mjs"],
            env: [
              { name: "API_URL", value: `http://${serviceIp}:8080` },
              { name: "API_KEY", valueFrom: { secretKeyRef: { name: "api-key", key: "key" } } },
              { name: "PROJECT", value: options.project },
              { name: "HOOK_URL", value: options.hookUrl },
            ],
            volumeMounts: [{ name: "client", mountPath: "/client" }],
          },
        ],
        volumes: [{ name: "client", configMap: { name: "api-client" } }],
      },
    },
  ];
  await cluster.kubectl(["apply", "-f", "-"], manifest.map((o) => JSON.stringify(o)).join("\n---\n"));
  await cluster.kubectl([
    "-n",
    namespace,
    "wait",
    "--for=condition=Ready",
    "pod/api-client",
    "--timeout=180s",
  ]);
  const lines = async () =>
    (await cluster.kubectl(["-n", namespace, "logs", "api-client"]))
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    async totals() {
      return waitUntil(
        "a round of API calls",
        async () => {
          const last = (await lines()).findLast((line) => typeof line.round === "number");
          return last as unknown as ApiTotals | undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    },
    async stop() {
      await cluster.kubectl(["-n", namespace, "exec", "api-client", "--", "touch", "/tmp/stop"]);
      return waitUntil(
        "the API client's last round and totals",
        async () => {
          const all = await lines();
          const stopped = all.find((line) => line.stopped);
          if (!stopped) return undefined;
          const failures = all
            .filter((line) => typeof line.failed === "string")
            .map((line) => JSON.stringify(line));
          const retries = all.filter((line) => typeof line.retried === "string") as unknown as ApiRetry[];
          return { totals: stopped as unknown as ApiTotals, failures, retries };
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    },
  };
}
