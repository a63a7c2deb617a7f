import type { AppsV1Api, V1Deployment } from "@kubernetes/client-node";
import { revisionAnnotation } from "./phase.js";

/**
 * When the rollout of the Deployment's current revision started: the creation time of its
 * ReplicaSet (the one the Deployment owns with the same revision annotation). Used for rollouts the
 * operator first sees after they progressed (it was down), so `started_at` is when it happened, not
 * when the operator noticed. undefined when it cannot be found; the caller then uses the time it saw it.
 */
export async function replicaSetCreatedAt(
  apps: AppsV1Api,
  deployment: V1Deployment,
): Promise<Date | undefined> {
  const namespace = deployment.metadata?.namespace;
  const uid = deployment.metadata?.uid;
  const revision = deployment.metadata?.annotations?.[revisionAnnotation];
  const labels = deployment.spec?.selector?.matchLabels;
  if (!namespace || !uid || !revision || !labels) return undefined;
  const labelSelector = Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  const { items } = await apps.listNamespacedReplicaSet({ namespace, labelSelector });
  const replicaSet = items.find(
    (candidate) =>
      candidate.metadata?.annotations?.[revisionAnnotation] === revision &&
      candidate.metadata?.ownerReferences?.some((owner) => owner.uid === uid),
  );
  const created = replicaSet?.metadata?.creationTimestamp;
  return created ? new Date(created) : undefined;
}

/** When the Deployment controller concluded the rollout: the Progressing condition's last update. */
export function concludedAt(deployment: V1Deployment): Date | undefined {
  const progressing = deployment.status?.conditions?.find((condition) => condition.type === "Progressing");
  const at = progressing?.lastUpdateTime ?? progressing?.lastTransitionTime;
  return at ? new Date(at) : undefined;
}
