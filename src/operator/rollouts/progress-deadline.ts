import type { WorkloadKind } from "../../deployments/schemas.js";
import type { RolloutPhase } from "./phase.js";
import type { Workload } from "./workload-kinds.js";

// StatefulSets and DaemonSets have no progressDeadlineSeconds and their controllers report no
// failure: a rollout that stops moving is failed by the operator, like the Deployment controller
// does, after the deadline this annotation sets on the workload (default 600 s, a Deployment's).

export const progressDeadlineAnnotation = "webhook-operator.io/progress-deadline-seconds";
export const defaultProgressDeadlineSeconds = 600;

/** What a StatefulSet's or DaemonSet's status says about its rollout, before any deadline. */
export interface WorkloadProgress {
  phase: "progressing" | "ready" | "succeeded";
  /** The status counters: they change whenever the rollout moves (a pod updated, ready, available). */
  counters: string;
  /** The counters as people read them, for the failure message. */
  summary: string;
  /** OnDelete: pods update only when someone deletes them, so waiting is not failing by default. */
  onDelete: boolean;
}

/**
 * The deadline of a workload's rollouts in seconds, or undefined for none: the annotation when it is a
 * whole number (0: none), else 600 s, except OnDelete rollouts, which have none unless annotated.
 */
export function progressDeadlineSeconds(workload: Workload, onDelete: boolean): number | undefined {
  const value = workload.metadata?.annotations?.[progressDeadlineAnnotation]?.trim() ?? "";
  if (/^\d{1,9}$/.test(value)) return Number(value) === 0 ? undefined : Number(value);
  return onDelete ? undefined : defaultProgressDeadlineSeconds;
}

/**
 * The phase of a rollout whose counters last moved at `since`: failed once the deadline passed without
 * progress (and until it moves again), else what its status says. `recheckInMs` is when to look again
 * if nothing changes meanwhile: nothing announces a deadline passing.
 */
export function phaseAtDeadline(
  progress: WorkloadProgress,
  at: { since: Date; now: Date; deadlineSeconds: number | undefined; kind: WorkloadKind; name: string },
): { phase: RolloutPhase; recheckInMs?: number } {
  if (progress.phase === "succeeded" || at.deadlineSeconds === undefined)
    return { phase: { phase: progress.phase } };
  const left = at.since.getTime() + at.deadlineSeconds * 1000 - at.now.getTime();
  if (left > 0) return { phase: { phase: progress.phase }, recheckInMs: left + 100 };
  return {
    phase: {
      phase: "failed",
      message:
        `${at.kind} "${at.name}" made no progress for ${at.deadlineSeconds} seconds ` +
        `(its progress deadline, ${progressDeadlineAnnotation}): ${progress.summary}.`,
    },
  };
}

/**
 * When each workload's rollout last moved, as this leader saw it: a new revision or new counters
 * restart the clock. Kept in memory for one leadership term: a new leader starts the clock when it
 * first sees a rollout, so a stall across a leader change fails late, never early.
 */
export class ProgressClock {
  private readonly last = new Map<string, { revision: string; counters: string; since: Date }>();

  observe(uid: string, revision: string, counters: string, now: Date): Date {
    const seen = this.last.get(uid);
    if (seen && seen.revision === revision && seen.counters === counters) return seen.since;
    this.last.set(uid, { revision, counters, since: now });
    return now;
  }

  forget(uid: string): void {
    this.last.delete(uid);
  }
}
