import type { V1DaemonSet } from "@kubernetes/client-node";
import type { WorkloadProgress } from "./progress-deadline.js";

/**
 * The rollout's revision: the DaemonSet's template generation, which the API server raises by one on
 * every change of the pod template and on nothing else (a rollback included, like a Deployment's
 * revision), and which the DaemonSet controller itself uses to tell updated pods from old ones.
 */
export const templateGenerationAnnotation = "deprecated.daemonset.template.generation";

export function daemonSetRevision(daemonSet: V1DaemonSet): string | undefined {
  const value = daemonSet.metadata?.annotations?.[templateGenerationAnnotation];
  return value && /^\d+$/.test(value) ? value : undefined;
}

/**
 * Reads a DaemonSet's rollout from the DaemonSet controller's own status, with the rule of
 * `kubectl rollout status`. Nothing is concluded until the controller has observed the latest spec.
 * - succeeded: every node that should run the pod runs the updated one (updatedNumberScheduled) and
 *   has it available (numberAvailable), whatever the strategy (OnDelete waits for the deletions).
 * - ready: at least one updated pod is available, i.e. more nodes have an available pod than there
 *   are nodes with an old one (with maxSurge, a node running both counts once: ready may come early).
 */
export function daemonSetProgress(daemonSet: V1DaemonSet): WorkloadProgress {
  const status = daemonSet.status;
  const desired = status?.desiredNumberScheduled ?? 0;
  const current = status?.currentNumberScheduled ?? 0;
  const updated = status?.updatedNumberScheduled ?? 0;
  const available = status?.numberAvailable ?? 0;
  const observedGeneration = status?.observedGeneration ?? 0;
  const onDelete = daemonSet.spec?.updateStrategy?.type === "OnDelete";
  const counters = [observedGeneration, desired, current, updated, status?.numberReady ?? 0, available].join(
    "/",
  );
  const summary = `${updated} of ${desired} nodes updated, ${available} of ${desired} available`;
  const progress = (phase: WorkloadProgress["phase"]) => ({ phase, counters, summary, onDelete });

  if (observedGeneration < (daemonSet.metadata?.generation ?? 0)) return progress("progressing");
  if (updated >= desired && available >= desired) return progress("succeeded");
  if (desired === 0 || available > current - updated) return progress("ready");
  return progress("progressing");
}
