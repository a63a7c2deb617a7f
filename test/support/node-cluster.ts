import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Cluster } from "./cluster.js";
import { deliveriesIn, type LoggedDelivery } from "./receiver-log.js";
import { repoRoot } from "./tools.js";

// What the node suite's files share: the tools on PATH as a person has them, polling, pods' readiness,
// the example receiver's log and the apiserver's audit log.

/** PATH with the pinned kubectl and helm of scripts/fetch-k8s-tool.sh first. */
export function pathWithTools(): string {
  const tool = (name: string) =>
    execFileSync("bash", [path.join(repoRoot, "scripts/fetch-k8s-tool.sh"), name], { encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1) ?? "";
  return [path.dirname(tool("kubectl")), path.dirname(tool("helm")), process.env.PATH].join(":");
}

interface PodStatus {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { image: string; readinessProbe?: unknown }[] };
  status: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** The pods of a label selector (not those on their way out), with whether each is Ready. */
export async function podsOf(cluster: Cluster, namespace: string, selector: string) {
  const { items } = JSON.parse(
    await cluster.kubectl(["-n", namespace, "get", "pods", "-l", selector, "-o", "json"]),
  ) as { items: PodStatus[] };
  return items
    .filter((pod) => !pod.metadata.deletionTimestamp)
    .map((pod) => ({
      ...pod,
      ready: pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    }));
}

export async function receiverDeliveries(cluster: Cluster, namespace: string): Promise<LoggedDelivery[]> {
  return deliveriesIn(
    await cluster.kubectl(["-n", namespace, "logs", "deployment/webhook-receiver", "--tail=-1"]),
  );
}

export interface AuditEntry {
  auditID: string;
  /** ResponseStarted (streamed answers only) or ResponseComplete. */
  stage: string;
  verb: string;
  requestReceivedTimestamp: string;
  user: { username: string };
  sourceIPs: string[];
  objectRef: { resource: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code: number };
}

/** Writes of Leases and Webhooks the apiserver recorded (scripts/cluster/start.sh's audit policy). */
export function auditLog(cluster: Cluster): AuditEntry[] {
  return readFileSync(path.join(cluster.dir, "logs/audit.log"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEntry);
}
