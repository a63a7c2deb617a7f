import type {
  AppsV1Api,
  KubernetesListObject,
  V1ControllerRevision,
  V1DaemonSet,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { slimObject } from "../cache-transforms.js";
import type { ControllerManager } from "../manager.js";
import { type ListPage, listInPages } from "../paged-list.js";
import {
  daemonSetRevisionBefore,
  revisionBefore,
  revisionImagesOnly,
} from "../rollouts/controller-revisions.js";
import { daemonSetProgress, daemonSetRevision } from "../rollouts/daemonset-phase.js";
import { daemonSetNewPods, statefulSetNewPods } from "../rollouts/new-pods.js";
import type { NewPods } from "../rollouts/pod-source.js";
import type { WorkloadProgress } from "../rollouts/progress-deadline.js";
import type { PreviousRevision } from "../rollouts/rollout-changes.js";
import {
  type ControllerRevisions,
  newestRevisionCreatedAt,
  statefulSetProgress,
  statefulSetRevision,
} from "../rollouts/statefulset-phase.js";
import { resourceOfKind, type Workload } from "../rollouts/workload-kinds.js";

/** What the workload rollout controller needs to know of one kind (StatefulSet or DaemonSet). */
export interface WorkloadSource<T extends Workload> {
  kind: "StatefulSet" | "DaemonSet";
  path: string;
  /** One page of the kind's list, all namespaces. */
  list(page: ListPage): Promise<KubernetesListObject<T>>;
  revision(workload: T): string | undefined;
  progress(workload: T): WorkloadProgress;
  /** When the current rollout started, from the kind's ControllerRevisions. */
  startedAt(workload: T): Date | undefined;
  /** The pods of the rollout's revision, for a rollout that stalls (new-pods.ts). */
  newPods(workload: T, revision: string): NewPods | undefined;
  /** The revision the current one (`revision`) replaces, from the kind's ControllerRevisions. */
  previousRevision(workload: T, revision: string): PreviousRevision | undefined;
}

export function statefulSetSource(
  apps: AppsV1Api,
  revisions: ControllerRevisions,
): WorkloadSource<V1StatefulSet> {
  return {
    kind: "StatefulSet",
    path: `/apis/apps/v1/${resourceOfKind.StatefulSet}`,
    list: (page) => apps.listStatefulSetForAllNamespaces(page),
    revision: (statefulSet) => statefulSetRevision(statefulSet, revisions),
    progress: statefulSetProgress,
    startedAt: (statefulSet) => newestRevisionCreatedAt(statefulSet, revisions),
    newPods: statefulSetNewPods,
    previousRevision: (statefulSet, revision) => revisionBefore(statefulSet, Number(revision), revisions),
  };
}

export function daemonSetSource(
  apps: AppsV1Api,
  revisions: ControllerRevisions,
): WorkloadSource<V1DaemonSet> {
  return {
    kind: "DaemonSet",
    path: `/apis/apps/v1/${resourceOfKind.DaemonSet}`,
    list: (page) => apps.listDaemonSetForAllNamespaces(page),
    revision: daemonSetRevision,
    progress: daemonSetProgress,
    startedAt: (daemonSet) => newestRevisionCreatedAt(daemonSet, revisions),
    newPods: daemonSetNewPods,
    previousRevision: (daemonSet) => daemonSetRevisionBefore(daemonSet, revisions),
  };
}

/**
 * The ControllerRevisions of StatefulSets and DaemonSets, cached (a StatefulSet's status names its
 * update revision; the number is on the ControllerRevision). `onChange` gets each one added or changed,
 * so its owner is looked at again when the cache catches up.
 */
export function controllerRevisionCache(
  manager: ControllerManager,
  onChange: (revision: V1ControllerRevision) => void,
) {
  // Its revision number and owner are read, and of its `data` (a copy of the pod template) only the
  // containers' names and images, for what changed between revisions (controller-revisions.ts).
  const slimRevision = (revision: V1ControllerRevision) => ({
    ...slimObject(revision),
    data: revisionImagesOnly(revision),
  });
  const informer = manager.informer<V1ControllerRevision>(
    "controllerrevisions",
    "/apis/apps/v1/controllerrevisions",
    () => listInPages((page) => manager.apps.listControllerRevisionForAllNamespaces(page), slimRevision),
    slimRevision,
  );
  informer.informer.on("add", onChange);
  informer.informer.on("update", onChange);
  const revisions: ControllerRevisions = {
    get: (namespace, name) => informer.informer.get(name, namespace),
    list: (namespace) => informer.informer.list(namespace),
  };
  return {
    informer,
    revisions,
    probe: () => manager.apps.listControllerRevisionForAllNamespaces({ limit: 1 }),
  };
}
