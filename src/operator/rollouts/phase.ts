import type { V1Deployment } from "@kubernetes/client-node";
import type { DeploymentStatus } from "../../deployments/schemas.js";
import type { DeploymentEventType } from "../../event-types.js";

export const revisionAnnotation = "deployment.kubernetes.io/revision";

/** What the Deployment controller reports about the rollout of the Deployment's current revision. */
export type RolloutPhase =
  | { phase: "progressing" }
  | { phase: "ready" }
  | { phase: "succeeded" }
  | { phase: "failed"; message: string };

/**
 * Reads the phase from the Deployment controller's own status (DESIGN.md, "Rollout → event mapping").
 * Nothing is concluded until the controller has observed the latest spec (observedGeneration).
 * - failed: Progressing=False with reason ProgressDeadlineExceeded.
 * - succeeded: Progressing=True/NewReplicaSetAvailable and updated == replicas == available == desired.
 * - ready: Available=True and at least one pod of the new revision is available, i.e. more pods are
 *   available than there are pods of older revisions (conservative when old pods are unavailable).
 */
export function rolloutPhase(deployment: V1Deployment): RolloutPhase {
  const status = deployment.status ?? {};
  const generation = deployment.metadata?.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation) return { phase: "progressing" };

  const conditions = status.conditions ?? [];
  const progressing = conditions.find((c) => c.type === "Progressing");
  const available = conditions.find((c) => c.type === "Available");
  if (progressing?.status === "False" && progressing.reason === "ProgressDeadlineExceeded") {
    return { phase: "failed", message: progressing.message ?? "The rollout exceeded its progress deadline." };
  }
  const desired = deployment.spec?.replicas ?? 1;
  const replicas = status.replicas ?? 0;
  const updated = status.updatedReplicas ?? 0;
  const availableReplicas = status.availableReplicas ?? 0;
  if (
    progressing?.status === "True" &&
    progressing.reason === "NewReplicaSetAvailable" &&
    updated === desired &&
    replicas === desired &&
    availableReplicas === desired
  ) {
    return { phase: "succeeded" };
  }
  const oldReplicas = replicas - updated;
  if (available?.status === "True" && (desired === 0 || availableReplicas > oldReplicas))
    return { phase: "ready" };
  return { phase: "progressing" };
}

/** The events a rollout in this phase has gone through, in order. */
const pathTo: Record<RolloutPhase["phase"] | "cancelled", DeploymentEventType[]> = {
  progressing: ["deployment.created"],
  ready: ["deployment.created", "deployment.ready"],
  succeeded: ["deployment.created", "deployment.ready", "deployment.succeeded"],
  failed: ["deployment.created", "deployment.failed"],
  cancelled: ["deployment.created", "deployment.cancelled"],
};

export const statusAfter: Record<RolloutPhase["phase"] | "cancelled", DeploymentStatus> = {
  progressing: "pending",
  ready: "ready",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
};

export function isFinished(status: DeploymentStatus): boolean {
  return status === "succeeded" || status === "failed" || status === "cancelled";
}

/**
 * The events still to emit for a rollout that has reached `phase`, given those already emitted: each
 * fires once, none is skipped (an operator that was down during `ready` emits it before `succeeded`),
 * and a finished rollout emits nothing more, with one exception: `failed` is not final in Kubernetes.
 * The Deployment controller keeps rolling after ProgressDeadlineExceeded, and when the same revision
 * completes after all, its `ready` (if not sent yet) and `succeeded` follow the `failed`.
 */
export function eventsToEmit(
  phase: RolloutPhase["phase"] | "cancelled",
  current: { status: DeploymentStatus; emitted: string[] } | undefined,
): DeploymentEventType[] {
  const recovering = current?.status === "failed" && (phase === "ready" || phase === "succeeded");
  if (current && isFinished(current.status) && !recovering) return [];
  const emitted = new Set(current?.emitted ?? []);
  return pathTo[phase].filter((event) => !emitted.has(event));
}
