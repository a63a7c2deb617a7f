import type { Workload } from "./workload-kinds.js";

// Where a rollout's environment, branch, commit and URL come from: our own annotations first, then
// annotations and labels that common CI/CD tools already set. The README lists them.
const sources = {
  environment: [
    "webhook-operator.io/environment",
    "app.gitlab.com/env",
    "environment",
    "app.kubernetes.io/environment",
  ],
  branch: ["webhook-operator.io/branch", "app.gitlab.com/branch", "git-branch", "branch"],
  commitSha: [
    "webhook-operator.io/commit-sha",
    "app.gitlab.com/commit",
    "git-commit",
    "commit-sha",
    "commit",
  ],
  commitMessage: ["webhook-operator.io/commit-message", "kubernetes.io/change-cause"],
  url: ["webhook-operator.io/url", "app.gitlab.com/url"],
} as const;

export const annotationSources = sources;
export const defaultEnvironment = "production";

export interface RolloutAnnotations {
  environment: string;
  branch: string | null;
  commitSha: string | null;
  commitMessage: string | null;
  url: string | null;
}

/**
 * Reads each field from the workload's annotations, then its labels, trying the names in order.
 * Annotations on the pod template are read too, since CI often stamps them there to force a rollout.
 */
export function readRolloutAnnotations(workload: Workload): RolloutAnnotations {
  const maps = [
    workload.metadata?.annotations,
    workload.spec?.template?.metadata?.annotations,
    workload.metadata?.labels,
  ];
  const read = (names: readonly string[]): string | null => {
    for (const map of maps) {
      for (const name of names) {
        const value = map?.[name]?.trim();
        if (value) return value;
      }
    }
    return null;
  };
  return {
    environment: read(sources.environment) ?? defaultEnvironment,
    branch: read(sources.branch),
    commitSha: read(sources.commitSha),
    commitMessage: read(sources.commitMessage),
    url: read(sources.url),
  };
}
