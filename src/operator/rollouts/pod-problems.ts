import type { CoreV1Event, V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import { type FailureReason, failureReasons, type PodProblem } from "../../formats/rollout-failure.js";

// What a pod of a rollout's new revision reports that the rollout will not get past by waiting, read
// as the kubelet and the scheduler write it: a container's `state.waiting.reason` (the image, the
// configuration, a crash loop), the pod's PodScheduled=False/Unschedulable condition (the scheduler's
// message), and the kubelet's Warning Events with reason Unhealthy for a readiness probe.

const waitingReasons = new Set<string>(
  failureReasons.filter((reason) => reason !== "Unschedulable" && reason !== "Unhealthy"),
);

// Readiness only: a startup probe fails by design until the app is up, within the failures its
// threshold allows, and past them the kubelet restarts the container (a crash loop, read above).
const probeFailure = "Readiness probe failed";

function containerProblem(pod: string, status: V1ContainerStatus, init: boolean): PodProblem | undefined {
  const waiting = status.state?.waiting;
  if (!waiting?.reason || !waitingReasons.has(waiting.reason)) return undefined;
  const last = status.lastState?.terminated;
  return {
    pod,
    container: status.name,
    init_container: init,
    reason: waiting.reason as FailureReason,
    message: waiting.message?.trim() || waiting.reason,
    exit_code: last?.exitCode ?? null,
    restart_count: status.restartCount,
    termination_message: last?.message?.trim() || null,
    log_tail: null,
  };
}

/** The container a kubelet event is about: its fieldPath is `spec.containers{name}`. */
export function eventContainer(event: CoreV1Event): string | undefined {
  const path = event.involvedObject.fieldPath ?? "";
  const open = path.indexOf("{");
  return open >= 0 && path.endsWith("}") ? path.slice(open + 1, -1) : undefined;
}

/** True when the pod's Ready condition is True. */
export const isPodReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/**
 * The problems one pod reports, from its status and (for probes) its Warning Events. A probe failing
 * counts only for a container that runs and is not ready and shows no other problem: a probe that
 * failed while the app warmed up and passes now is history, not a cause.
 */
export function podProblems(pod: V1Pod, warnings: readonly CoreV1Event[] = []): PodProblem[] {
  const name = pod.metadata?.name ?? "";
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const problems: PodProblem[] = [];
  if (scheduled?.status === "False" && scheduled.reason === "Unschedulable") {
    problems.push({
      pod: name,
      container: null,
      init_container: false,
      reason: "Unschedulable",
      message: scheduled.message?.trim() || "Unschedulable",
      exit_code: null,
      restart_count: null,
      termination_message: null,
      log_tail: null,
    });
  }
  const statuses: [V1ContainerStatus, boolean][] = [
    ...(pod.status?.initContainerStatuses ?? []).map((s): [V1ContainerStatus, boolean] => [s, true]),
    ...(pod.status?.containerStatuses ?? []).map((s): [V1ContainerStatus, boolean] => [s, false]),
  ];
  for (const [status, init] of statuses) {
    const problem = containerProblem(name, status, init);
    if (problem) problems.push(problem);
  }
  for (const status of pod.status?.containerStatuses ?? []) {
    if (status.ready || !status.state?.running) continue;
    if (problems.some((p) => p.container === status.name)) continue;
    const probe = warnings.find(
      (event) =>
        event.reason === "Unhealthy" &&
        eventContainer(event) === status.name &&
        event.message?.startsWith(probeFailure),
    );
    if (!probe) continue;
    problems.push({
      pod: name,
      container: status.name,
      init_container: false,
      reason: "Unhealthy",
      message: probe.message?.trim() ?? "",
      exit_code: null,
      restart_count: status.restartCount,
      termination_message: null,
      log_tail: null,
    });
  }
  return problems;
}

/** When an event last happened: a series' last observation, else its last timestamp, else its time. */
export function lastSeen(event: CoreV1Event): Date | undefined {
  const at = event.series?.lastObservedTime ?? event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp;
  return at ? new Date(at) : undefined;
}
