// What `kubectl get deliveries` of 500 rows costs against the same 500 rows from /api (five pages of
// 100, its largest): wall time and Postgres queries (the pool's query calls, counted by wrapping it).
// Needs a running control plane: `bash scripts/cluster/start.sh DIR`, then
// `CLUSTER_DIR=DIR npx tsx bench/kubectl-deliveries.ts` (it registers the APIService for its run).
import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { loadConfig } from "../src/app/config.js";
import { startService } from "../src/app/service.js";
import { createLogger } from "../src/logger.js";
import {
  hostAddress,
  kubectlBinary,
  registerAggregatedApi,
  servingCertificate,
  unregisterAggregatedApi,
} from "../test/support/aggregated-api.js";
import { clusterAt, createNamespaces, uniqueName } from "../test/support/cluster.js";
import { freePort } from "../test/support/ports.js";
import { wallClockMs } from "./clock.js";

const run = promisify(execFile);
const runs = 15;
const cluster = clusterAt(process.env.CLUSTER_DIR ?? "");
const label = uniqueName("bench-kubectl");
const namespace = uniqueName("bench");
const apiService = { namespace, name: "webhook-operator-aggregated" };
const apiKey = "bench-admin-key-0123456789";

await createNamespaces(cluster, label, namespace);
const tls = await servingCertificate(cluster, apiService);
const port = await freePort();
const config = loadConfig({
  DATA_DIR: await mkdtemp(path.join(tmpdir(), "wo-bench-kubectl-")),
  API_KEY: apiKey,
  SECRET_ENCRYPTION_KEYS: Buffer.alloc(32, 7).toString("base64"),
  PORT: "0",
  HOST: "0.0.0.0",
  LOG_LEVEL: "warn",
  NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
  LEADER_ELECTION_LEASE_NAME: label,
  AGGREGATED_API_PORT: String(port),
  AGGREGATED_API_CERT_FILE: tls.certFile,
  AGGREGATED_API_KEY_FILE: tls.keyFile,
});
const service = await startService(config, createLogger("warn"), { kubeConfig: cluster.kubeConfig() });
await registerAggregatedApi(cluster, apiService, {
  address: await hostAddress(),
  port,
  caBundle: tls.caBundle,
});
await cluster.kubectl(
  ["-n", namespace, "apply", "-f", "-"],
  JSON.stringify({
    apiVersion: "webhook-operator.io/v1alpha1",
    kind: "Webhook",
    metadata: { name: "all-deploys" },
    spec: { url: "http://127.0.0.1:9/hook", events: ["deployment.created"] },
  }),
);
let ids: { project: number; webhook: number } | undefined;
while (!ids) {
  const { rows } = await service.pool.query<{ project: number; webhook: number }>(
    "SELECT p.id::int AS project, w.id::int AS webhook FROM webhooks w JOIN projects p ON p.id = w.project_id WHERE p.slug = $1",
    [namespace],
  );
  ids = rows[0];
  if (!ids) await new Promise((resolve) => setTimeout(resolve, 200));
}
await service.pool.query(
  `WITH e AS (INSERT INTO events (id, project_id, event_type, envelope, created_at)
              SELECT gen_random_uuid(), $2, 'deployment.created', '{}', now() - i * interval '1 second'
                FROM generate_series(1, 500) i RETURNING id, event_type, created_at)
   INSERT INTO deliveries (webhook_id, event_id, event_type, state, success, status_code, response_body, created_at, delivered_at)
   SELECT $1, id, event_type, 'done', true, 200, 'ok', created_at, created_at FROM e`,
  [ids.webhook, ids.project],
);

let queries = 0;
const query = service.pool.query.bind(service.pool);
service.pool.query = ((...args: Parameters<typeof query>) => {
  queries++;
  return query(...args);
}) as typeof query;

async function measure(what: string, once: () => Promise<number>) {
  await once(); // warm: discovery cache, SubjectAccessReview and API key caches, Postgres' own caches
  const times: number[] = [];
  let counted = 0;
  for (let i = 0; i < runs; i++) {
    const before = queries;
    const started = wallClockMs();
    const rows = await once();
    times.push(wallClockMs() - started);
    counted = queries - before;
    if (rows !== 500) throw new Error(`${what}: ${rows} rows, not 500`);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${what}: median ${times[Math.floor(runs / 2)]?.toFixed(1)} ms (min ${times[0]?.toFixed(1)}), ${counted} Postgres queries`,
  );
}

const kubectl = await kubectlBinary();
await measure("kubectl get deliveries (500 rows, one request, Table)", async () => {
  const { stdout } = await run(kubectl, [
    "--kubeconfig",
    cluster.kubeconfigPath,
    "-n",
    namespace,
    "get",
    "deliveries",
    "--chunk-size=500",
    "--no-headers",
  ]);
  return stdout.trim().split("\n").length;
});
const server = cluster.kubeConfig().getCurrentCluster()?.server ?? "";
await measure("GET through the API server, Table (curl, no kubectl process)", async () => {
  const { stdout } = await run("curl", [
    "-sS",
    "--cacert",
    path.join(cluster.dir, "pki/ca.crt"),
    "--cert",
    path.join(cluster.dir, "pki/admin.crt"),
    "--key",
    path.join(cluster.dir, "pki/admin.key"),
    "-H",
    "Accept: application/json;as=Table;v=v1;g=meta.k8s.io",
    `${server}/apis/deliveries.webhook-operator.io/v1alpha1/namespaces/${namespace}/deliveries?limit=500`,
  ]);
  return JSON.parse(stdout).rows.length;
});
await measure("/api deliveries, 5 pages of 100 (fetch)", async () => {
  let rows = 0;
  let next: string | undefined =
    `/api/projects/${ids?.project}/webhooks/${ids?.webhook}/deliveries?limit=100`;
  while (next && rows < 500) {
    const response: Response = await fetch(`${service.url}${next}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = (await response.json()) as unknown[] | { data: unknown[] };
    rows += (Array.isArray(body) ? body : body.data).length;
    next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
    if (next && !next.startsWith("/api")) next = `/api${next}`;
  }
  return rows;
});

await unregisterAggregatedApi(cluster);
await cluster.kubectl(["delete", "namespace", namespace, "--wait=false"]);
await service.close();
