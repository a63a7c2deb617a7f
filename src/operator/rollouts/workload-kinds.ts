import type { KubernetesObject, V1Deployment, V1PodTemplateSpec } from "@kubernetes/client-node";
import type { WorkloadKind } from "../../deployments/schemas.js";
import { type RolloutPhase, revisionAnnotation, rolloutPhase } from "./phase.js";
import { concludedAt } from "./rollout-times.js";

export { type WorkloadKind, workloadKinds } from "../../deployments/schemas.js";

/** What the rollout code reads of any workload: its metadata and its pod template. */
export interface Workload extends KubernetesObject {
  spec?: { template?: V1PodTemplateSpec };
}

/**
 * One rollout as its workload's controller reports it, whatever the kind: what recordRollout records.
 * Each kind's controller reads its own status into this (phase.ts, statefulset-phase.ts,
 * daemonset-phase.ts).
 */
export interface ObservedRollout {
  kind: WorkloadKind;
  workload: Workload;
  /** The rollout's revision number; undefined until the workload's controller has assigned one. */
  revision: string | undefined;
  phase: RolloutPhase;
  /** When the workload's controller concluded the rollout, where it says (a Deployment's Progressing). */
  concludedAt?: Date;
}

/** A Deployment's rollout: its revision annotation and the Deployment controller's conditions. */
export function deploymentRollout(deployment: V1Deployment): ObservedRollout {
  return {
    kind: "Deployment",
    workload: deployment,
    revision: deployment.metadata?.annotations?.[revisionAnnotation],
    phase: rolloutPhase(deployment),
    concludedAt: concludedAt(deployment),
  };
}

/** The kind's resource in the apps/v1 API (its URL, RBAC rules, log lines). */
export const resourceOfKind: Record<WorkloadKind, string> = {
  Deployment: "deployments",
  StatefulSet: "statefulsets",
  DaemonSet: "daemonsets",
};
