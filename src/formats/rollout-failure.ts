// Why a rollout failed, as its deployment.failed event carries it (payload.rollout.failure, for the
// webhooks that ask for rollout details): what the new revision's pods report, bounded so that a
// card or a log line stays small whatever the workload's size. docs/formats.md shows an example.

/** What a pod or one of its containers reports that stops the rollout. */
export const failureReasons = [
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "Unschedulable",
  "Unhealthy",
] as const;
export type FailureReason = (typeof failureReasons)[number];

/** One problem of one pod: a container's (or, for Unschedulable, the pod's own). */
export interface PodProblem {
  pod: string;
  /** null for a pod-level problem (Unschedulable). */
  container: string | null;
  /** True for an init container. */
  init_container: boolean;
  reason: FailureReason;
  /** What the kubelet, the scheduler or the probe said. */
  message: string;
  /** The last termination's exit code, when the container has terminated (a crash loop). */
  exit_code: number | null;
  restart_count: number | null;
  /** What the container wrote to its termination message file (terminationMessagePath), redacted. */
  termination_message: string | null;
  /** The last lines of the container's log (its previous run's for a crash loop), redacted; null when not read. */
  log_tail: string[] | null;
}

/** A Warning Event of one of those pods, newest first. */
export interface PodWarning {
  pod: string;
  reason: string;
  message: string;
  count: number;
  last_seen: string | null;
}

export interface RolloutFailure {
  /** The first problem's reason: what the card leads with. */
  reason: FailureReason;
  message: string;
  /** True when the operator failed the rollout before its progress deadline (ROLLOUT_FAIL_FAST). */
  failed_early: boolean;
  /** A few problems, the most telling first. */
  problems: PodProblem[];
  /** How many pods of the new revision show a problem, listed or not. */
  pods_with_problems: number;
  /** How many problems were left out of `problems`. */
  problems_omitted: number;
  warnings: PodWarning[];
}
