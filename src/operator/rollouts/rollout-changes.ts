import type { V1PodTemplateSpec } from "@kubernetes/client-node";
import type { ImageChange, RolloutChanges } from "../../formats/rollout-details.js";
import type { RolloutAnnotations } from "./annotations.js";
import type { Workload } from "./workload-kinds.js";

// What changed in a rollout (docs/formats.md, "Rollout details"): each container's image in the old
// revision's pod template and the new one's, and the labels and annotations common tools set that
// name a version or a source.

/** One container of a pod template: its name, image, and whether it is an init container. */
export interface ContainerImage {
  name: string;
  image: string | null;
  init: boolean;
}

/** The revision a rollout replaces: its number and its pod template's images. */
export interface PreviousRevision {
  revision: string;
  images: ContainerImage[];
}

/**
 * Labels and annotations that name a version or a source, in the order they are listed: the
 * Kubernetes recommended version label, the OCI image annotations (often copied onto the pod
 * template), Argo CD's tracking annotation and the instance label it tracks by otherwise, and the
 * labels Flux's kustomize-controller and helm-controller put on what they apply.
 */
export const versionMetadataNames = [
  "app.kubernetes.io/version",
  "org.opencontainers.image.revision",
  "org.opencontainers.image.source",
  "argocd.argoproj.io/tracking-id",
  "app.kubernetes.io/instance",
  "kustomize.toolkit.fluxcd.io/name",
  "kustomize.toolkit.fluxcd.io/namespace",
  "helm.toolkit.fluxcd.io/name",
  "helm.toolkit.fluxcd.io/namespace",
] as const;

/** A pod template's containers, init containers first (they run first), each in spec order. */
export function templateImages(template: V1PodTemplateSpec | undefined): ContainerImage[] {
  const of = (containers: { name?: string; image?: string }[] | undefined, init: boolean) =>
    (containers ?? []).map((c) => ({ name: c.name ?? "", image: c.image ?? null, init }));
  return [...of(template?.spec?.initContainers, true), ...of(template?.spec?.containers, false)];
}

/**
 * Each container's image before and after, matched by name and by being an init container or not:
 * the new revision's containers in its order, then any the old one had and the new one dropped. With
 * no old revision known every `before` is null.
 */
export function imageChanges(before: ContainerImage[] | undefined, after: ContainerImage[]): ImageChange[] {
  const key = (c: ContainerImage) => `${c.init ? "init" : "app"}/${c.name}`;
  const old = new Map((before ?? []).map((c) => [key(c), c.image]));
  const now = new Set(after.map(key));
  return [
    ...after.map((c) => ({
      container: c.name,
      init: c.init,
      before: old.get(key(c)) ?? null,
      after: c.image,
    })),
    ...(before ?? [])
      .filter((c) => !now.has(key(c)))
      .map((c) => ({ container: c.name, init: c.init, before: c.image, after: null })),
  ];
}

/**
 * The version and source labels and annotations present, each read from the pod template's
 * annotations, then its labels, then the workload's annotations, then its labels (the first wins).
 */
export function versionMetadata(workload: Workload): Record<string, string> {
  const maps = [
    workload.spec?.template?.metadata?.annotations,
    workload.spec?.template?.metadata?.labels,
    workload.metadata?.annotations,
    workload.metadata?.labels,
  ];
  const found: Record<string, string> = {};
  for (const name of versionMetadataNames) {
    const value = maps.map((map) => map?.[name]?.trim()).find((v) => v);
    if (value) found[name] = value;
  }
  return found;
}

/** What changed, from the workload now, the revision it replaces (when known) and its CI annotations. */
export function rolloutChanges(
  workload: Workload,
  previous: PreviousRevision | undefined,
  facts: Pick<RolloutAnnotations, "branch" | "commitSha" | "commitMessage">,
): RolloutChanges {
  return {
    images: imageChanges(previous?.images, templateImages(workload.spec?.template)),
    previous_revision: previous?.revision ?? null,
    change_cause: facts.commitMessage,
    commit_sha: facts.commitSha,
    branch: facts.branch,
    metadata: versionMetadata(workload),
  };
}
