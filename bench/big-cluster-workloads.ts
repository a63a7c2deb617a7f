// The big-cluster benchmark's workloads: N workloads in M namespaces, a third of each kind the operator
// watches, with the ordinary container spec a team writes, none of them running a pod: Deployments and
// StatefulSets with replicas 0, DaemonSets whose nodeSelector matches no node. Applied with `kubectl
// apply` as a team would, and waited on until their controllers have rolled out every one.
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { AppsV1Api } from "@kubernetes/client-node";
import { daemonSetProgress } from "../src/operator/rollouts/daemonset-phase.js";
import { rolloutPhase } from "../src/operator/rollouts/phase.js";
import { statefulSetProgress } from "../src/operator/rollouts/statefulset-phase.js";
import type { WorkloadKind } from "../src/operator/rollouts/workload-kinds.js";
import type { Cluster } from "../test/support/cluster.js";
import { waitFor } from "./operator-cluster.js";

export const benchLabel = "webhook-operator.io/bench";

export const namespaceName = (index: number) => `big-${String(index).padStart(3, "0")}`;

/** The workloads of a namespace: the `index`th is of the kind `index % 3` names, so a third of each. */
const kindsInTurn: WorkloadKind[] = ["Deployment", "StatefulSet", "DaemonSet"];
const namePrefix: Record<WorkloadKind, string> = { Deployment: "app", StatefulSet: "db", DaemonSet: "agent" };

export function workloadAt(index: number): { kind: WorkloadKind; name: string } {
  const kind = kindsInTurn[index % kindsInTurn.length] as WorkloadKind;
  return { kind, name: `${namePrefix[kind]}-${Math.floor(index / kindsInTurn.length)}` };
}

/** How many of each kind `perNamespace` workloads in each of `namespaces` make. */
export function kindCounts(namespaces: number, perNamespace: number): Record<WorkloadKind, number> {
  const counts: Record<WorkloadKind, number> = { Deployment: 0, StatefulSet: 0, DaemonSet: 0 };
  for (let index = 0; index < perNamespace; index++) counts[workloadAt(index).kind] += namespaces;
  return counts;
}

/** A pod template as an application team writes one: a container with ports, env, probes, resources. */
function podTemplateYaml(namespace: string, name: string, extraSpec = ""): string {
  return `  template:
    metadata:
      labels: {app.kubernetes.io/name: ${name}, app.kubernetes.io/part-of: shop}
      annotations: {webhook-operator.io/commit-sha: 0f3c9e1}
    spec:${extraSpec}
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
 * A workload of `kind` that runs no pod: a Deployment or StatefulSet with replicas 0 (the StatefulSet
 * with the volume claim template a database has), a DaemonSet for nodes labelled as none is.
 */
function workloadYaml(namespace: string, kind: WorkloadKind, name: string): string {
  const head = `apiVersion: apps/v1
kind: ${kind}
metadata:
  name: ${name}
  namespace: ${namespace}
  labels: {app.kubernetes.io/name: ${name}, app.kubernetes.io/part-of: shop, ${benchLabel}: big}
  annotations: {webhook-operator.io/environment: production}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: ${name}}}
`;
  switch (kind) {
    case "Deployment":
      return `${head}  replicas: 0\n${podTemplateYaml(namespace, name)}`;
    case "StatefulSet":
      return `${head}  replicas: 0
  serviceName: ${name}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
${podTemplateYaml(namespace, name)}`;
    case "DaemonSet":
      return `${head}${podTemplateYaml(namespace, name, "\n      nodeSelector: {webhook-operator.io/bench-node: none}")}`;
  }
}

/**
 * Writes one file per `namespacesPerFile` namespaces (each namespace and its workloads) and applies
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
      for (let index = 0; index < options.perNamespace; index++) {
        const { kind, name } = workloadAt(index);
        documents.push(workloadYaml(namespace, kind, name));
      }
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

/** Pages through a list of the bench's workloads, counting those `done` says are rolled out. */
async function countAll<T>(
  list: (page: { labelSelector: string; limit: number; _continue?: string }) => Promise<{
    items: T[];
    metadata?: { _continue?: string };
  }>,
  done: (item: T) => boolean,
): Promise<number> {
  let count = 0;
  let next: string | undefined;
  do {
    const page = await list({ labelSelector: `${benchLabel}=big`, limit: 1000, _continue: next });
    count += page.items.filter(done).length;
    next = page.metadata?._continue || undefined;
  } while (next);
  return count;
}

/** How many of the bench's workloads their controllers have rolled out (a revision, succeeded). */
async function rolledOut(apps: AppsV1Api): Promise<number> {
  const counts = await Promise.all([
    countAll(
      (page) => apps.listDeploymentForAllNamespaces(page),
      (deployment) =>
        Boolean(deployment.metadata?.annotations?.["deployment.kubernetes.io/revision"]) &&
        rolloutPhase(deployment).phase === "succeeded",
    ),
    countAll(
      (page) => apps.listStatefulSetForAllNamespaces(page),
      (statefulSet) =>
        Boolean(statefulSet.status?.updateRevision) && statefulSetProgress(statefulSet).phase === "succeeded",
    ),
    countAll(
      (page) => apps.listDaemonSetForAllNamespaces(page),
      (daemonSet) => daemonSetProgress(daemonSet).phase === "succeeded",
    ),
  ]);
  return counts.reduce((sum, n) => sum + n, 0);
}

export async function waitRolledOut(cluster: Cluster, count: number, timeoutMs: number): Promise<void> {
  const apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
  await waitFor(
    `${count} workloads rolled out`,
    async () => ((await rolledOut(apps)) >= count ? true : undefined),
    timeoutMs,
    5_000,
  );
}

/**
 * Restarts the cluster's controller-manager with a higher client rate limit: at its default 20
 * requests a second, rolling out 5,000 new workloads (a ReplicaSet or ControllerRevision and status
 * updates each) takes the control plane ten minutes before the operator has anything to do. Not the
 * operator's figure.
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
    [
      ...args,
      "--kube-api-qps=300",
      "--kube-api-burst=600",
      "--concurrent-deployment-syncs=10",
      "--concurrent-statefulset-syncs=10",
      "--concurrent-daemonset-syncs=10",
    ],
    { detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();
  await writeFile(pidFile, `${child.pid}\n`);
}
