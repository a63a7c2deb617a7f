import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import type { ChartRelease } from "./chart-release.js";
import type { Cluster } from "./cluster.js";
import { chartDir } from "./monitoring-files.js";
import { freePort } from "./ports.js";
import { repoRoot } from "./tools.js";
import { waitUntil } from "./wait.js";

// A real Prometheus (scripts/cluster/prometheus.sh: Debian's is built without Kubernetes discovery), run
// with a configuration of the test's own on loopback, that finds the operator's pods through the real
// apiserver as the Prometheus Operator does for the chart's ServiceMonitor, scrapes them with the
// metrics token the ServiceMonitor names, and evaluates the chart's alert rules.

/** What the Prometheus Operator turns a ServiceMonitor into: EndpointSlice discovery, relabelled the same way. */
export interface ServiceMonitor {
  namespaces: string[];
  matchLabels: Record<string, string>;
  port: string;
  path: string;
  /** The Secret key holding the bearer token the endpoint presents (authorization.credentials). */
  credentials?: { name: string; key: string };
}

/** The ServiceMonitor the chart renders with serviceMonitor.enabled=true for this release. */
export async function chartServiceMonitor(chart: ChartRelease): Promise<ServiceMonitor> {
  const rendered = await chart.helm([
    "template",
    chart.release,
    chartDir,
    "--set",
    "serviceMonitor.enabled=true",
  ]);
  const monitor = rendered
    .split(/^---$/m)
    .map((document) => parse(document))
    .find((object) => object?.kind === "ServiceMonitor");
  const [endpoint] = monitor.spec.endpoints;
  const credentials = endpoint.authorization?.credentials;
  if (endpoint.authorization && endpoint.authorization.type !== "Bearer")
    throw new Error(`the ServiceMonitor's authorization is ${endpoint.authorization.type}, not Bearer`);
  return {
    namespaces: monitor.spec.namespaceSelector.matchNames,
    matchLabels: monitor.spec.selector.matchLabels,
    port: endpoint.port,
    path: endpoint.path,
    ...(credentials ? { credentials: { name: credentials.name, key: credentials.key } } : {}),
  };
}

/**
 * A ServiceAccount prometheus in namespace wo-monitoring that may discover EndpointSlices, Services and
 * pods (what an in-cluster Prometheus is granted), and a token of it.
 */
export async function prometheusToken(cluster: Cluster): Promise<string> {
  const read = ["get", "list", "watch"];
  const objects = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "wo-monitoring" } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "prometheus", namespace: "wo-monitoring" },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "wo-prometheus" },
      rules: [
        { apiGroups: [""], resources: ["services", "pods"], verbs: read },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: read },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "wo-prometheus" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "wo-prometheus" },
      subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: "wo-monitoring" }],
    },
  ];
  await cluster.kubectl(
    ["apply", "-f", "-"],
    objects.map((object) => JSON.stringify(object)).join("\n---\n"),
  );
  const token = await cluster.kubectl([
    "-n",
    "wo-monitoring",
    "create",
    "token",
    "prometheus",
    "--duration=1h",
  ]);
  return token.trim();
}

const label = (name: string) => `__meta_kubernetes_service_label_${name.replace(/[^a-zA-Z0-9_]/g, "_")}`;

function scrapeConfig(
  monitor: ServiceMonitor,
  apiserver: string,
  caFile: string,
  tokenFile: string,
  scrapeCredentialsFile: string | undefined,
) {
  return {
    job_name: "webhook-operator",
    scrape_interval: "2s",
    scrape_timeout: "2s",
    metrics_path: monitor.path,
    // What the Prometheus Operator makes of the endpoint's authorization: the Secret's value, as Bearer.
    ...(scrapeCredentialsFile
      ? { authorization: { type: "Bearer", credentials_file: scrapeCredentialsFile } }
      : {}),
    kubernetes_sd_configs: [
      {
        role: "endpointslice",
        api_server: apiserver,
        tls_config: { ca_file: caFile },
        authorization: { credentials_file: tokenFile },
        namespaces: { names: monitor.namespaces },
      },
    ],
    relabel_configs: [
      ...Object.entries(monitor.matchLabels).map(([name, value]) => ({
        source_labels: [label(name)],
        regex: value,
        action: "keep",
      })),
      { source_labels: ["__meta_kubernetes_endpointslice_port_name"], regex: monitor.port, action: "keep" },
      { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
      { source_labels: ["__meta_kubernetes_service_name"], target_label: "service" },
      { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
      { source_labels: ["__meta_kubernetes_pod_container_name"], target_label: "container" },
      { source_labels: ["__meta_kubernetes_service_name"], target_label: "job" },
      { target_label: "endpoint", replacement: monitor.port },
    ],
  };
}

export interface Prometheus {
  url: string;
  query(expr: string): Promise<unknown[]>;
  /** The alerting rules' states (inactive, pending, firing) by alert name. */
  alertStates(): Promise<Map<string, string>>;
  targets(): Promise<{ health: string; labels: Record<string, string> }[]>;
  /** The end of what Prometheus logged, for failure messages. */
  logTail(): string;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus scraping what `monitor` selects, with `rules` (rule groups) evaluated every 2 s.
 * Authenticates to the apiserver with a ServiceAccount token of its own (`token`), as an in-cluster
 * Prometheus would.
 */
export async function startPrometheus(
  cluster: Cluster,
  monitor: ServiceMonitor,
  token: string,
  rules: unknown,
): Promise<Prometheus> {
  const dir = await mkdtemp(path.join(tmpdir(), "wo-prometheus-"));
  const server = cluster.kubeConfig().getCurrentCluster();
  if (!server?.caFile) throw new Error(`no cluster with a CA file in ${cluster.kubeconfigPath}`);
  await writeFile(path.join(dir, "token"), token, { mode: 0o600 });
  await writeFile(path.join(dir, "rules.yaml"), stringify(rules));
  let scrapeCredentialsFile: string | undefined;
  if (monitor.credentials) {
    // The Prometheus Operator reads the Secret in the ServiceMonitor's namespace; so does this.
    const { name, key } = monitor.credentials;
    const encoded = await cluster.kubectl([
      "-n",
      monitor.namespaces[0] ?? "default",
      "get",
      "secret",
      name,
      "-o",
      `jsonpath={.data.${key.replaceAll(".", "\\.")}}`,
    ]);
    scrapeCredentialsFile = path.join(dir, "scrape-credentials");
    await writeFile(scrapeCredentialsFile, Buffer.from(encoded.trim(), "base64"), { mode: 0o600 });
  }
  const config = {
    global: { scrape_interval: "2s", evaluation_interval: "2s" },
    rule_files: [path.join(dir, "rules.yaml")],
    scrape_configs: [
      scrapeConfig(monitor, server.server, server.caFile, path.join(dir, "token"), scrapeCredentialsFile),
    ],
  };
  await writeFile(path.join(dir, "prometheus.yml"), stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = "";
  const binary = execFileSync("bash", [path.join(repoRoot, "scripts/cluster/prometheus.sh")], {
    encoding: "utf8",
    timeout: 1_800_000,
  }).trim();
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  const api = async (route: string) => {
    const response = await fetch(`${url}/api/v1/${route}`);
    const body = (await response.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== "success") throw new Error(`Prometheus ${route}: ${body.error}`);
    return body.data;
  };
  await waitUntil(
    "Prometheus to be ready",
    async () => {
      if (child.exitCode !== null) throw new Error(`Prometheus exited with ${child.exitCode}`);
      const ready = await fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      return ready ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch((error: Error) => {
    throw new Error(`Prometheus did not start (${error.message}):\n${log.slice(-3000)}`);
  });
  return {
    url,
    async query(expr) {
      const data = (await api(`query?query=${encodeURIComponent(expr)}`)) as { result: unknown[] };
      return data.result;
    },
    async alertStates() {
      const data = (await api("rules?type=alert")) as {
        groups: { rules: { name: string; state: string }[] }[];
      };
      return new Map(data.groups.flatMap((group) => group.rules.map((rule) => [rule.name, rule.state])));
    },
    async targets() {
      const data = (await api("targets")) as {
        activeTargets: { health: string; labels: Record<string, string> }[];
      };
      return data.activeTargets;
    },
    logTail: () => log.slice(-3000),
    async stop() {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
