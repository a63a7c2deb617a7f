import type { V1ControllerRevision, V1PodTemplateSpec } from "@kubernetes/client-node";
import { templateImagesOnly } from "../cache-transforms.js";
import { type ContainerImage, type PreviousRevision, templateImages } from "./rollout-changes.js";
import { type ControllerRevisions, numberedRevisions } from "./statefulset-phase.js";
import type { Workload } from "./workload-kinds.js";

// The revision a StatefulSet's or DaemonSet's rollout replaces, from the ControllerRevisions the
// operator caches already (their numbers give the rollout's revision). A ControllerRevision's `data`
// is the pod template as a patch (`{"spec": {"template": …}}`); the cache keeps of it only the
// containers' names and images.

interface RevisionData {
  spec?: { template?: V1PodTemplateSpec };
}

/** A ControllerRevision's `data` reduced to its pod template's container names and images. */
export function revisionImagesOnly(revision: V1ControllerRevision): object | undefined {
  const template = templateImagesOnly((revision.data as RevisionData | undefined)?.spec?.template);
  return template && { spec: { template } };
}

const imagesOf = (revision: V1ControllerRevision): ContainerImage[] =>
  templateImages((revision.data as RevisionData | undefined)?.spec?.template);

/** A ControllerRevision as what a rollout replaces, under `number` (its own unless said). */
const previousOf = (
  revision: V1ControllerRevision | undefined,
  number = revision?.revision,
): PreviousRevision | undefined => revision && { revision: String(number), images: imagesOf(revision) };

/**
 * A StatefulSet's: its ControllerRevision with the highest number below the rollout's (a rollback
 * renumbers the revision it revives, so the one below is what was running), numbered as its rollouts
 * are (numberedRevisions). Undefined for its first revision or when that one is gone
 * (revisionHistoryLimit).
 */
export function revisionBefore(
  workload: Workload,
  current: number,
  revisions: ControllerRevisions,
): PreviousRevision | undefined {
  const before = numberedRevisions(workload, revisions)
    .filter(({ number }) => number < current)
    .at(-1);
  return before && previousOf(before.revision, before.number);
}

/**
 * A DaemonSet's: its status names no ControllerRevision (its rollout's revision is the template
 * generation, numbered apart), so the current one is told by its images. The newest with the
 * DaemonSet's images is the current one and the next is what it replaces; a newest with other images
 * is the one replaced, the new one not cached yet. A change of anything but the images, seen while
 * the cache is behind, is compared with the revision before the one it replaced (an image line may
 * then show a change a revision older; the next event of the rollout, the cache caught up, is right).
 */
export function daemonSetRevisionBefore(
  workload: Workload,
  revisions: ControllerRevisions,
): PreviousRevision | undefined {
  const [newest, next] = numberedRevisions(workload, revisions)
    .map(({ revision }) => revision)
    .reverse();
  if (!newest) return undefined;
  const now = JSON.stringify(templateImages(workload.spec?.template));
  return JSON.stringify(imagesOf(newest)) === now ? previousOf(next) : previousOf(newest);
}
