import type { AppsV1Api, V1Deployment } from "@kubernetes/client-node";
import { revisionAnnotation } from "./phase.js";

/**
 * When the rollout of the Deployment's current revision started: the creation time of its
 * ReplicaSet (the one the Deployment owns with the same revision annotation). Used for rollouts the
 * operator first sees after they progressed (it was down), so `started_at` is when it happened, not
 * when the operator noticed. undefined when it cannot be found; the caller then uses the time it saw it.
 * A request: asked only when the ReplicaSet cache (replica-set-cache.ts) does not hold it yet.
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

// Kubernetes records times in whole seconds (a ReplicaSet's creationTimestamp, a condition's
// lastUpdateTime). A rollout's times are kept on that scale, whichever clock gave them, so that
// comparing them compares moments and not resolutions: a rollout first seen at 12:00:00.700 and
// concluded at 12:00:00.900 is recorded by Kubernetes as concluded at 12:00:00, which would read as
// finished before it started.
const wholeSecond = (at: Date) => new Date(Math.floor(at.getTime() / 1000) * 1000);

/**
 * started_at: the creation of the rollout's ReplicaSet when it is known (a rollout first seen after it
 * progressed), else the second the operator first saw the rollout, which is the second Kubernetes
 * records for that creation when the operator watches as it happens.
 */
export function rolloutStartedAt(replicaSetCreated: Date | undefined, now: Date): Date {
  return wholeSecond(replicaSetCreated ?? now);
}

/**
 * finished_at: when the Deployment controller concluded (Progressing's last update), else now; never
 * later than now (an API server whose clock runs ahead) and never earlier than started_at (clocks of
 * different machines), so finished_at >= started_at always holds.
 */
export function rolloutFinishedAt(startedAt: Date | null, concluded: Date | undefined, now: Date): Date {
  const latest = wholeSecond(now);
  const at = concluded && concluded < latest ? wholeSecond(concluded) : latest;
  return startedAt && at < startedAt ? startedAt : at;
}
