import type { V1ControllerRevision, V1StatefulSet } from "@kubernetes/client-node";
import type { WorkloadProgress } from "./progress-deadline.js";

/**
 * Reads a StatefulSet's rollout from the StatefulSet controller's own status, with the rule of
 * `kubectl rollout status`. Nothing is concluded until the controller has observed the latest spec.
 * - The pods to update are those at or above the partition (RollingUpdate), or all of them (OnDelete,
 *   where each updates when someone deletes it).
 * - succeeded: that many pods run the update revision (updatedReplicas) and every desired pod is
 *   available: a partitioned rollout is done when the pods at or above its partition are.
 * - ready: at least one pod of the update revision is available, i.e. more pods are available than
 *   there are pods of older revisions.
 */
export function statefulSetProgress(statefulSet: V1StatefulSet): WorkloadProgress {
  const status = statefulSet.status;
  const desired = statefulSet.spec?.replicas ?? 1;
  const onDelete = statefulSet.spec?.updateStrategy?.type === "OnDelete";
  const partition = onDelete ? 0 : (statefulSet.spec?.updateStrategy?.rollingUpdate?.partition ?? 0);
  const toUpdate = Math.max(0, desired - Math.max(0, partition));
  const replicas = status?.replicas ?? 0;
  const updated = status?.updatedReplicas ?? 0;
  const available = status?.availableReplicas ?? 0;
  const observedGeneration = status?.observedGeneration ?? 0;
  const counters = [observedGeneration, replicas, updated, status?.readyReplicas ?? 0, available].join("/");
  const summary = `${updated} of ${toUpdate} pods updated, ${available} of ${desired} available`;
  const progress = (phase: WorkloadProgress["phase"]) => ({ phase, counters, summary, onDelete });

  if (observedGeneration < (statefulSet.metadata?.generation ?? 0)) return progress("progressing");
  if (updated >= toUpdate && available >= desired) return progress("succeeded");
  if (desired === 0 || available > replicas - updated) return progress("ready");
  return progress("progressing");
}

/** The StatefulSet controller's ControllerRevisions, as the operator's cache holds them. */
export interface ControllerRevisions {
  get(namespace: string, name: string): V1ControllerRevision | undefined;
  list(namespace: string): readonly V1ControllerRevision[];
}

const ownedBy = (uid: string | undefined) => (revision: V1ControllerRevision) =>
  uid !== undefined && (revision.metadata?.ownerReferences ?? []).some((owner) => owner.uid === uid);

const createdMs = (revision: V1ControllerRevision) =>
  revision.metadata?.creationTimestamp ? new Date(revision.metadata.creationTimestamp).getTime() : 0;

/**
 * The workload's ControllerRevisions in the cache, oldest first as the StatefulSet controller orders
 * its history (by number, then creation, then name), each with the number its rollout is given. That
 * is the ControllerRevision's own number, but where the controller gave two the same number, the later
 * one counts one up, and those after it follow. The controller numbers a new revision from its own
 * cache of them: a template changed within a second or so of the one before can get the same number
 * (seen on a loaded control plane), and two rollouts with one number would be one to a reader of them.
 * Once the earlier of the two is pruned (revisionHistoryLimit: ten revisions later by default), the
 * numbers after it drop back by one: a rollout in progress at that moment could be seen twice.
 */
export function numberedRevisions(
  workload: { metadata?: { namespace?: string; uid?: string } },
  revisions: ControllerRevisions,
): { revision: V1ControllerRevision; number: number }[] {
  const owned = revisions
    .list(workload.metadata?.namespace ?? "")
    .filter(ownedBy(workload.metadata?.uid))
    .sort(
      (a, b) =>
        a.revision - b.revision ||
        createdMs(a) - createdMs(b) ||
        (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
    );
  let previous = 0;
  return owned.map((revision) => {
    previous = Math.max(revision.revision, previous + 1);
    return { revision, number: previous };
  });
}

/**
 * The rollout's revision: the number of the StatefulSet's update revision (status.updateRevision, a
 * ControllerRevision), as `kubectl rollout history` shows it (numberedRevisions: one up where the
 * controller repeated a number). A rollback re-uses an old ControllerRevision and gives it the next
 * number, so it is a new rollout, as with Deployments. undefined while the cache does not hold it yet,
 * or holds it behind another of the StatefulSet's (the controller renumbers it before it reports it:
 * the cache is behind).
 */
export function statefulSetRevision(
  statefulSet: V1StatefulSet,
  revisions: ControllerRevisions,
): string | undefined {
  const name = statefulSet.status?.updateRevision;
  const newest = numberedRevisions(statefulSet, revisions).at(-1);
  if (!name || newest?.revision.metadata?.name !== name) return undefined;
  return String(newest.number);
}

/** When the workload's newest ControllerRevision was made: its current rollout's start. */
export function newestRevisionCreatedAt(
  workload: { metadata?: { namespace?: string; uid?: string } },
  revisions: ControllerRevisions,
): Date | undefined {
  const created = numberedRevisions(workload, revisions).at(-1)?.revision.metadata?.creationTimestamp;
  return created ? new Date(created) : undefined;
}
