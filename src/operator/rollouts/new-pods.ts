import type {
  V1DaemonSet,
  V1Deployment,
  V1LabelSelector,
  V1Pod,
  V1StatefulSet,
} from "@kubernetes/client-node";

// Which pods are a rollout's new revision, per kind, as each controller labels them: the workload's
// selector plus the label that names the revision (the API server filters on it), and a check of the
// pod's owner, since a selector can match pods of other owners.

function selectorOf(selector: V1LabelSelector | undefined, revisionLabel: [string, string]): string {
  const labels = { ...(selector?.matchLabels ?? {}), [revisionLabel[0]]: revisionLabel[1] };
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

const controlledBy = (pod: V1Pod, match: (owner: { uid: string; name: string }) => boolean) =>
  (pod.metadata?.ownerReferences ?? []).some((owner) => owner.controller && match(owner));

/**
 * A Deployment's new pods: those of the ReplicaSet of its revision, which the Deployment controller
 * names `<deployment>-<pod-template-hash>` and whose pods carry that hash as a label.
 */
export function deploymentNewPods(deployment: V1Deployment, replicaSet: string | undefined) {
  const name = deployment.metadata?.name ?? "";
  const namespace = deployment.metadata?.namespace;
  if (!namespace || !replicaSet?.startsWith(`${name}-`)) return undefined;
  const hash = replicaSet.slice(name.length + 1);
  return {
    namespace,
    labelSelector: selectorOf(deployment.spec?.selector, ["pod-template-hash", hash]),
    owns: (pod: V1Pod) => controlledBy(pod, (owner) => owner.name === replicaSet),
  };
}

/** A StatefulSet's new pods: labelled with its update revision (a ControllerRevision's name). */
export function statefulSetNewPods(statefulSet: V1StatefulSet) {
  const namespace = statefulSet.metadata?.namespace;
  const revision = statefulSet.status?.updateRevision;
  const uid = statefulSet.metadata?.uid;
  if (!namespace || !revision || !uid) return undefined;
  return {
    namespace,
    labelSelector: selectorOf(statefulSet.spec?.selector, ["controller-revision-hash", revision]),
    owns: (pod: V1Pod) => controlledBy(pod, (owner) => owner.uid === uid),
  };
}

/** A DaemonSet's new pods: labelled with the template generation, its rollout's revision. */
export function daemonSetNewPods(daemonSet: V1DaemonSet, revision: string) {
  const namespace = daemonSet.metadata?.namespace;
  const uid = daemonSet.metadata?.uid;
  if (!namespace || !uid) return undefined;
  return {
    namespace,
    labelSelector: selectorOf(daemonSet.spec?.selector, ["pod-template-generation", revision]),
    owns: (pod: V1Pod) => controlledBy(pod, (owner) => owner.uid === uid),
  };
}
