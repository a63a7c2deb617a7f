// The big-cluster benchmark's workloads: N Deployments (replicas 0, an ordinary container spec) in M
// namespaces, applied with `kubectl apply` as a team would, and waited on until the Deployment
// controller has rolled out every one.
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AppsV1Api, type V1Deployment } from "@kubernetes/client-node";
import { rolloutPhase } from "../src/operator/rollouts/phase.js";
import type { Cluster } from "../test/support/cluster.js";
import { waitFor } from "./operator-cluster.js";

export const benchLabel = "webhook-operator.io/bench";

export const namespaceName = (index: number) => `big-${String(index).padStart(3, "0")}`;

/** A Deployment as an application team writes one: a container with ports, env, probes, resources. */
function deploymentYaml(namespace: string, name: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
  labels: {app.kubernetes.io/name: ${name}, app.kubernetes.io/part-of: shop, ${benchLabel}: big}
  annotations: {webhook-operator.io/environment: production}
spec:
  replicas: 0
  selector: {matchLabels: {app.kubernetes.io/name: ${name}}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: ${name}, app.kubernetes.io/part-of: shop}
      annotations: {webhook-operator.io/commit-sha: 0f3c9e1}
    spec:
      containers:
        - name: app
          image: registry.example/shop/${name}:1.4.2
          args: [--port=8080, --log-format=json]
          ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9090}]
          env:
            - {name: DATABASE_HOST, value: postgres.${namespace}.svc.cluster.local}
            - {name: LOG_LEVEL, value: info}
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
          resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
          readinessProbe: {httpGet: {path: /readyz, port: http}, periodSeconds: 5}
          livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10}
          volumeMounts: [{name: tmp, mountPath: /tmp}]
      volumes: [{name: tmp, emptyDir: {}}]
`;
}

/**
 * Writes one file per `namespacesPerFile` namespaces (each namespace and its Deployments) and applies
 * them with `kubectl apply -f`, `parallel` at a time. Returns the file count.
 */
export async function applyWorkloads(
  cluster: Cluster,
  options: { namespaces: number; perNamespace: number; dir: string; parallel: number },
): Promise<number> {
  const files: string[] = [];
  const namespacesPerFile = 25;
  for (let first = 0; first < options.namespaces; first += namespacesPerFile) {
    const documents: string[] = [];
    for (let n = first; n < Math.min(first + namespacesPerFile, options.namespaces); n++) {
      const namespace = namespaceName(n);
      documents.push(
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n  labels: {${benchLabel}: big}\n`,
      );
      for (let d = 0; d < options.perNamespace; d++) documents.push(deploymentYaml(namespace, `app-${d}`));
    }
    const file = path.join(options.dir, `workloads-${files.length}.yaml`);
    await writeFile(file, documents.join("---\n"));
    files.push(file);
  }
  const queue = [...files];
  await Promise.all(
    Array.from({ length: options.parallel }, async () => {
      for (let file = queue.shift(); file; file = queue.shift()) await cluster.kubectl(["apply", "-f", file]);
    }),
  );
  return files.length;
}

/** How many of the bench's Deployments the Deployment controller has rolled out (revision, succeeded). */
async function rolledOut(apps: AppsV1Api): Promise<number> {
  let done = 0;
  let next: string | undefined;
  do {
    const page = await apps.listDeploymentForAllNamespaces({
      labelSelector: `${benchLabel}=big`,
      limit: 1000,
      _continue: next,
    });
    done += page.items.filter(
      (deployment: V1Deployment) =>
        deployment.metadata?.annotations?.["deployment.kubernetes.io/revision"] &&
        rolloutPhase(deployment).phase === "succeeded",
    ).length;
    next = page.metadata?._continue || undefined;
  } while (next);
  return done;
}

export async function waitRolledOut(cluster: Cluster, count: number, timeoutMs: number): Promise<void> {
  const apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
  await waitFor(
    `${count} Deployments rolled out`,
    async () => ((await rolledOut(apps)) >= count ? true : undefined),
    timeoutMs,
    5_000,
  );
}

/**
 * Restarts the cluster's controller-manager with a higher client rate limit: at its default 20
 * requests a second, rolling out 5,000 new Deployments (a ReplicaSet and status updates each) takes
 * the control plane ten minutes before the operator has anything to do. Not the operator's figure.
 */
export async function raiseControllerManagerRate(cluster: Cluster): Promise<void> {
  const pidFile = path.join(cluster.dir, "pids/kube-controller-manager");
  const pid = (await readFile(pidFile, "utf8")).trim();
  const command = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter(Boolean);
  await cluster.stop("kube-controller-manager");
  const log = openSync(path.join(cluster.dir, "logs/kube-controller-manager.log"), "a");
  const [binary = "", ...args] = command;
  const child = spawn(
    binary,
    [...args, "--kube-api-qps=300", "--kube-api-burst=600", "--concurrent-deployment-syncs=10"],
    { detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();
  await writeFile(pidFile, `${child.pid}\n`);
}
