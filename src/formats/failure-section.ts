import type { RolloutDetails } from "./rollout-details.js";
import type { PodProblem } from "./rollout-failure.js";
import { multiLine, oneLine } from "./text-limits.js";

// The "Why it failed" section of a chat card, from the failure the event carries (deployment.failed
// of a rollout whose pods could be read): one text, raw, for every service; each renderer escapes it
// and cuts it to its own limit, so the lines are in the order worth keeping when the end is cut.

export const failureSectionTitle = "Why it failed";

/** Lines of a container's log a card shows, at most (the payload has up to ROLLOUT_LOG_LINES). */
export const cardLogLines = 5;
/** Warning Events a card shows, at most. */
export const cardWarnings = 3;

const where = (problem: PodProblem) =>
  problem.container === null
    ? `pod ${problem.pod}`
    : `${problem.init_container ? "init container" : "container"} ${problem.container} of pod ${problem.pod}`;

function problemLines(problem: PodProblem): string[] {
  const lines = [`${problem.reason} in ${where(problem)}`, oneLine(problem.message)];
  const counts = [
    problem.exit_code === null ? null : `exit code ${problem.exit_code}`,
    problem.restart_count ? `${problem.restart_count} restarts` : null,
  ].filter((part) => part !== null);
  if (counts.length > 0) lines.push(counts.join(" · "));
  if (problem.termination_message)
    lines.push(`Termination message: ${multiLine(problem.termination_message)}`);
  const log = problem.log_tail?.slice(-cardLogLines).map(oneLine) ?? [];
  if (log.length > 0) lines.push("Last log lines:", ...log);
  return lines;
}

/** The section's text, or null when the event carries no failure. */
export function failureSection(rollout: RolloutDetails | null | undefined): string | null {
  const failure = rollout?.failure;
  if (!failure || !Array.isArray(failure.problems) || failure.problems.length === 0) return null;
  const [first, ...others] = failure.problems;
  const lines = problemLines(first as PodProblem);
  if (failure.failed_early) lines.push("Failed before the progress deadline: this will not heal by waiting.");
  for (const problem of others) lines.push("", ...problemLines(problem));
  const unlisted = failure.pods_with_problems - new Set(failure.problems.map((p) => p.pod)).size;
  if (unlisted > 0) lines.push("", `${unlisted} more pod${unlisted === 1 ? "" : "s"} with problems`);
  const warnings = failure.warnings.slice(0, cardWarnings);
  if (warnings.length > 0) {
    lines.push("", "Warnings:");
    for (const w of warnings)
      lines.push(`${w.reason}${w.count > 1 ? ` (×${w.count})` : ""}: ${oneLine(w.message)}`);
  }
  return multiLine(lines.join("\n"));
}
