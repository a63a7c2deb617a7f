import { type ChildProcess, spawn } from "node:child_process";
import type { ChartRelease } from "./chart-release.js";
import type { Cluster } from "./cluster.js";
import { pathWithTools } from "./node-cluster.js";
import { freePort } from "./ports.js";
import { waitUntil } from "./wait.js";

/** /api of a release installed on the node, through `kubectl port-forward`, with its generated admin key. */
export interface ReleaseApi {
  call(route: string, init?: RequestInit): Promise<unknown>;
  close(): void;
}

export async function releaseApi(cluster: Cluster, chart: ChartRelease): Promise<ReleaseApi> {
  const secret = await cluster.kubectl([
    ...["-n", chart.namespace, "get", "secret", `${chart.fullname}-api-key`],
    ...["-o", "jsonpath={.data.api-key}"],
  ]);
  const key = Buffer.from(secret, "base64").toString();
  const port = await freePort();
  const args = ["--kubeconfig", cluster.kubeconfigPath, "-n", chart.namespace, "port-forward"];
  const forward: ChildProcess = spawn("kubectl", [...args, `service/${chart.fullname}`, `${port}:8080`], {
    env: { ...process.env, PATH: pathWithTools() },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(
    "the port-forward",
    async () =>
      fetch(`${base}/healthz`).then(
        () => true,
        () => undefined,
      ),
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
  return {
    async call(route, init = {}) {
      const response = await fetch(`${base}${route}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${init.method ?? "GET"} ${route}: ${response.status} ${text}`);
      return JSON.parse(text);
    },
    close: () => forward.kill(),
  };
}
