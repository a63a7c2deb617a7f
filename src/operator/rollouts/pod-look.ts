import type { CoreV1Event, V1Pod } from "@kubernetes/client-node";
import type { PodProblem } from "../../formats/rollout-failure.js";
import { listedPods, type RedactionSettings, redactLines, redactText } from "./failure-report.js";
import { isPodReady, podProblems } from "./pod-problems.js";
import { type NewPods, type PodSource, podsPerLook } from "./pod-source.js";

// One look at a rollout's new pods: a list of them, the Warning Events of the few that are not ready,
// and, for a report (the failure the event carries), the log of the containers that crash or fail a
// probe and wrote no termination message. At most 1 + 3 + 3 requests.

/** Events that say a pod that does not fit now is about to (a node being added, a victim preempted). */
const helpOnTheWay = new Set(["TriggeredScaleUp", "Nominated"]);

export interface Look {
  problems: PodProblem[];
  events: CoreV1Event[];
  readyPods: number;
  /** A problem that waiting will not mend: an Unschedulable pod that help is coming for is not one. */
  blocked: boolean;
}

/** The pods whose events a look reads: not ready, those with a problem first; three at most. */
function podsToAsk(pods: V1Pod[], depth: "poll" | "report"): V1Pod[] {
  const withProblem = (pod: V1Pod) => podProblems(pod).length > 0;
  // A poll reads events only where they decide: a probe (a running pod) or help for an unscheduled one.
  const decides = (pod: V1Pod) =>
    podProblems(pod).every((p) => p.reason === "Unschedulable") || depth === "report";
  return pods
    .filter((pod) => !isPodReady(pod) && decides(pod))
    .sort((a, b) => Number(withProblem(b)) - Number(withProblem(a)))
    .slice(0, 3);
}

function helped(pod: V1Pod | undefined, events: readonly CoreV1Event[]): boolean {
  if (pod?.status?.nominatedNodeName) return true;
  return events.some((event) => helpOnTheWay.has(event.reason ?? ""));
}

export async function lookAtPods(
  reads: PodSource,
  selection: NewPods,
  depth: "poll" | "report",
  redaction: RedactionSettings,
): Promise<Look | undefined> {
  const pods = (await reads.pods(selection))?.slice(0, podsPerLook);
  if (!pods) return undefined;
  const eventsOf = new Map<string, CoreV1Event[]>();
  for (const pod of podsToAsk(pods, depth)) {
    const name = pod.metadata?.name ?? "";
    eventsOf.set(name, await reads.events(selection.namespace, name));
  }
  const byName = new Map(pods.map((pod) => [pod.metadata?.name ?? "", pod]));
  let problems = pods.flatMap((pod) => podProblems(pod, eventsOf.get(pod.metadata?.name ?? "")));
  const blocked = problems.some(
    (p) => p.reason !== "Unschedulable" || !helped(byName.get(p.pod), eventsOf.get(p.pod) ?? []),
  );
  if (depth === "report") problems = await withContainerText(reads, selection.namespace, problems, redaction);
  return {
    problems,
    events: [...eventsOf.values()].flat(),
    readyPods: pods.filter(isPodReady).length,
    blocked,
  };
}

/** Termination messages redacted; the log tail of the listed pods' crashing or unhealthy containers. */
async function withContainerText(
  reads: PodSource,
  namespace: string,
  problems: PodProblem[],
  redaction: RedactionSettings,
): Promise<PodProblem[]> {
  const listed = new Set(listedPods(problems));
  const logged = new Set<string>();
  const out: PodProblem[] = [];
  for (const problem of problems) {
    const termination =
      problem.termination_message && redactText(problem.termination_message, redaction.redactWords);
    let log_tail: string[] | null = null;
    const wantsLog =
      redaction.logLines > 0 &&
      !termination &&
      problem.container &&
      listed.has(problem.pod) &&
      !logged.has(problem.pod) &&
      (problem.reason === "CrashLoopBackOff" || problem.reason === "Unhealthy");
    if (wantsLog && problem.container) {
      logged.add(problem.pod);
      const lines = await reads.logTail(
        {
          namespace,
          pod: problem.pod,
          container: problem.container,
          previous: problem.reason !== "Unhealthy",
        },
        redaction.logLines,
      );
      log_tail = lines ? redactLines(lines, redaction.redactWords) : null;
    }
    out.push({ ...problem, termination_message: termination || null, log_tail });
  }
  return out;
}
