import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Cluster } from "./cluster.js";
import { repoRoot } from "./tools.js";
import { waitUntil } from "./wait.js";

const run = promisify(execFile);

/** The machine's own address, where the API server reaches an operator on the host (lib.sh's node_address). */
export async function hostAddress(): Promise<string> {
  const { stdout } = await run("ip", ["-4", "route", "get", "1.1.1.1"]);
  const address = /\bsrc (\d+\.\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  if (!address) throw new Error(`no non-loopback address in: ${stdout}`);
  return address;
}

/**
 * A serving certificate for the aggregated API, signed by the cluster's CA for the Service name the
 * aggregation layer checks (`<service>.<namespace>.svc`), as the chart's generated one is.
 */
export async function servingCertificate(
  cluster: Cluster,
  service: { namespace: string; name: string },
): Promise<{ certFile: string; keyFile: string; caBundle: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "wo-aggregated-api-"));
  const keyFile = path.join(dir, "tls.key");
  const certFile = path.join(dir, "tls.crt");
  const csr = path.join(dir, "tls.csr");
  const host = `${service.name}.${service.namespace}.svc`;
  await run("openssl", [
    ...["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
    ...["-keyout", keyFile, "-out", csr, "-subj", `/CN=${host}`],
  ]);
  const extensions = path.join(dir, "extensions");
  await run("sh", [
    "-c",
    `printf 'subjectAltName=DNS:${host}\\nextendedKeyUsage=serverAuth\\n' > '${extensions}'`,
  ]);
  const ca = path.join(cluster.dir, "pki/ca");
  await run("openssl", [
    ...["x509", "-req", "-in", csr, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial"],
    ...["-out", certFile, "-days", "2", "-extfile", extensions],
  ]);
  return { certFile, keyFile, caBundle: (await readFile(`${ca}.crt`)).toString("base64") };
}

/**
 * The APIService of deliveries.webhook-operator.io/v1alpha1 pointing at an operator on the host: a
 * Service without selector whose Endpoints name the host's address (the API server routes to
 * endpoints: --enable-aggregator-routing), then waits until the aggregation layer finds it Available.
 */
export async function registerAggregatedApi(
  cluster: Cluster,
  service: { namespace: string; name: string },
  backend: { address: string; port: number; caBundle: string },
): Promise<void> {
  const manifests = [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: service,
      spec: { ports: [{ name: "https", port: 443, targetPort: backend.port }] },
    },
    {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: service,
      subsets: [{ addresses: [{ ip: backend.address }], ports: [{ name: "https", port: backend.port }] }],
    },
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1alpha1.deliveries.webhook-operator.io" },
      spec: {
        group: "deliveries.webhook-operator.io",
        version: "v1alpha1",
        service: { ...service, port: 443 },
        caBundle: backend.caBundle,
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    },
  ];
  await cluster.kubectl(
    ["apply", "-f", "-"],
    manifests.map((manifest) => JSON.stringify(manifest)).join("\n"),
  );
  await waitUntil(
    "the APIService to be Available",
    async (saw) => {
      const conditions = await cluster.kubectl([
        ...["get", "apiservice", "v1alpha1.deliveries.webhook-operator.io"],
        "-o=jsonpath={.status.conditions}",
      ]);
      saw(conditions);
      return /"type":"Available"/.test(conditions) && /"status":"True"/.test(conditions) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** Removes what registerAggregatedApi made cluster-wide (its Service goes with its namespace). */
export async function unregisterAggregatedApi(cluster: Cluster): Promise<void> {
  await cluster.kubectl([
    "delete",
    "apiservice",
    "v1alpha1.deliveries.webhook-operator.io",
    "--ignore-not-found",
  ]);
}

/** The kubectl the cluster suite uses (scripts/fetch-k8s-tool.sh), for a test that runs it as a process. */
export async function kubectlBinary(): Promise<string> {
  const { stdout } = await run("bash", [path.join(repoRoot, "scripts/fetch-k8s-tool.sh"), "kubectl"]);
  return stdout.trim().split("\n").at(-1) ?? "kubectl";
}
