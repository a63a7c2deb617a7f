import type { V1Namespace } from "@kubernetes/client-node";

// A project of the spec is a namespace: slug = namespace name. These annotations may override the
// project's name and repo_url (README, "Kubernetes").
export const projectNameAnnotation = "webhook-operator.io/project-name";
export const repoUrlAnnotation = "webhook-operator.io/repo-url";

type Requirement = (labels: Record<string, string>) => boolean;

/**
 * Parses an equality-based label selector: `key=value`, `key==value`, `key!=value`, `key`, `!key`,
 * comma-separated (all must hold). Set-based forms are not supported and are reported as errors.
 */
export function parseLabelSelector(selector: string): Requirement[] {
  return selector
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part): Requirement => {
      const match = /^(!?)([\w./-]+)(?:\s*(==|=|!=)\s*([\w.-]*))?$/.exec(part);
      if (!match)
        throw new Error(
          `Unsupported label selector requirement '${part}' (use key=value, key!=value, key or !key).`,
        );
      const [, negated, key = "", operator, value = ""] = match;
      if (!operator) return negated ? (labels) => !(key in labels) : (labels) => key in labels;
      if (negated) throw new Error(`Unsupported label selector requirement '${part}'.`);
      return operator === "!=" ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
    });
}

export interface NamespaceProjects {
  isSelected(namespace: string): boolean;
  /** The selection applied to a namespace object (one from a list, not yet in the cache). */
  matches(namespace: V1Namespace): boolean;
  /** Being deleted: Kubernetes refuses new objects (Events) in it. */
  isTerminating(namespace: string): boolean;
  describe(namespace: string): { name: string; displayName: string | null; repoUrl: string | null };
}

/**
 * Which namespaces are projects: those matching the label selector (default: all) whose names do not
 * start with `kube-` (kube-system, kube-public, kube-node-lease).
 */
export function namespaceProjects(
  selector: string,
  getNamespace: (name: string) => V1Namespace | undefined,
): NamespaceProjects {
  const requirements = parseLabelSelector(selector);
  const matches = (namespace: V1Namespace) => {
    if ((namespace.metadata?.name ?? "").startsWith("kube-")) return false;
    const labels = namespace.metadata?.labels ?? {};
    return requirements.every((requirement) => requirement(labels));
  };
  return {
    matches,
    isSelected(name) {
      // A namespace not (or no longer) in the cache is no project: a deleted one must not come back.
      const namespace = getNamespace(name);
      return namespace !== undefined && matches(namespace);
    },
    isTerminating(name) {
      return getNamespace(name)?.status?.phase === "Terminating";
    },
    describe(name) {
      const annotations = getNamespace(name)?.metadata?.annotations ?? {};
      return {
        name,
        displayName: annotations[projectNameAnnotation]?.trim() || null,
        repoUrl: annotations[repoUrlAnnotation]?.trim() || null,
      };
    },
  };
}
