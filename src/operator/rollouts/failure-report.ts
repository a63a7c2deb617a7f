import type { CoreV1Event } from "@kubernetes/client-node";
import {
  failureReasons,
  type PodProblem,
  type PodWarning,
  type RolloutFailure,
} from "../../formats/rollout-failure.js";
import { lastSeen } from "./pod-problems.js";

// A rollout's failure as the payload carries it: a few pods' problems, the newest warnings, texts cut
// to a length a chat card shows, and what a container wrote (its termination message, its log) passed
// through the redaction rule, since it leaves the cluster.

export const reportBounds = {
  /** Pods whose problems are listed; the others are counted. */
  pods: 3,
  problems: 5,
  warnings: 5,
  /** Characters of a message, a termination message or a log line. */
  text: 500,
  logLine: 300,
};

/** ROLLOUT_LOG_LINES and ROLLOUT_REDACT_WORDS. */
export interface RedactionSettings {
  logLines: number;
  /** A line that contains one of these (any case) is replaced by `[redacted]`, whole. */
  redactWords: readonly string[];
}

export const redactedLine = "[redacted]";

const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

/** Each line that names one of the words becomes `[redacted]`; no pattern, so nothing to get wrong. */
export function redactLines(lines: readonly string[], words: readonly string[]): string[] {
  const lower = words.map((word) => word.toLowerCase());
  return lines.map((line) => {
    const text = line.toLowerCase();
    return lower.some((word) => text.includes(word)) ? redactedLine : cut(line, reportBounds.logLine);
  });
}

/** A container's text (termination message), line by line through redactLines, then cut. */
export function redactText(text: string, words: readonly string[]): string {
  return cut(redactLines(text.split("\n"), words).join("\n"), reportBounds.text);
}

const rank = (problem: PodProblem) => failureReasons.indexOf(problem.reason);

/** The most telling first: by reason (failureReasons' order), then pod and container name. */
export function orderProblems(problems: readonly PodProblem[]): PodProblem[] {
  return [...problems].sort(
    (a, b) =>
      rank(a) - rank(b) || a.pod.localeCompare(b.pod) || (a.container ?? "").localeCompare(b.container ?? ""),
  );
}

/** The pods (at most reportBounds.pods) whose problems the report lists, in order. */
export function listedPods(problems: readonly PodProblem[]): string[] {
  return [...new Set(orderProblems(problems).map((p) => p.pod))].slice(0, reportBounds.pods);
}

export function warningsOf(events: readonly CoreV1Event[]): PodWarning[] {
  return events
    .filter((event) => event.type === "Warning")
    .sort((a, b) => (lastSeen(b)?.getTime() ?? 0) - (lastSeen(a)?.getTime() ?? 0))
    .slice(0, reportBounds.warnings)
    .map((event) => ({
      pod: event.involvedObject.name ?? "",
      reason: event.reason ?? "",
      message: cut(event.message?.trim() ?? "", reportBounds.text),
      count: event.series?.count ?? event.count ?? 1,
      last_seen: lastSeen(event)?.toISOString() ?? null,
    }));
}

/** The failure of the payload, or undefined when no pod shows a problem. */
export function failureReport(
  problems: readonly PodProblem[],
  events: readonly CoreV1Event[],
  failedEarly: boolean,
): RolloutFailure | undefined {
  const ordered = orderProblems(problems);
  const first = ordered[0];
  if (!first) return undefined;
  const pods = new Set(listedPods(ordered));
  const listed = ordered.filter((p) => pods.has(p.pod)).slice(0, reportBounds.problems);
  return {
    reason: first.reason,
    message: cut(first.message, reportBounds.text),
    failed_early: failedEarly,
    problems: listed.map((p) => ({ ...p, message: cut(p.message, reportBounds.text) })),
    pods_with_problems: new Set(ordered.map((p) => p.pod)).size,
    problems_omitted: ordered.length - listed.length,
    warnings: warningsOf(events.filter((event) => pods.has(event.involvedObject.name ?? ""))),
  };
}

/** error_message of a rollout the rule failed early: the reason, where, and what was said. */
export function failureMessage(failure: RolloutFailure, afterSeconds: number): string {
  const [first] = failure.problems;
  const where = first?.container
    ? `container "${first.container}" of pod "${first.pod}"`
    : `pod "${first?.pod ?? ""}"`;
  const others = failure.pods_with_problems - 1;
  const more = others > 0 ? ` (and ${others} more pod${others === 1 ? "" : "s"})` : "";
  return (
    `${failure.reason}: ${where}${more}: ${failure.message} ` +
    `(failed after ${afterSeconds} seconds without progress, ROLLOUT_FAIL_FAST)`
  );
}
