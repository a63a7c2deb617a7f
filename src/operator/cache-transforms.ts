import type { KubernetesObject, V1ObjectMeta, V1PodTemplateSpec } from "@kubernetes/client-node";

// What the informers keep of each object, applied to every object on its way into a cache (a list's
// items and each watch event). A big cluster's objects are mostly what the operator never reads: the
// server-side apply bookkeeping (managedFields), `kubectl apply`'s copy of the whole object in an
// annotation, and pod templates. With 5,000 Deployments applied with kubectl the V8 heap grew by
// 107 MiB holding them whole and by 35 MiB holding this (docs/kubernetes.md, "Big clusters").

/** A transform from an object as the API server sends it to what a cache keeps of it. */
export type CacheTransform<T extends KubernetesObject = KubernetesObject> = (object: T) => T;

export const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration";

/** Metadata without managedFields and without the last-applied annotation; everything else as it was. */
export function slimMetadata(metadata: V1ObjectMeta | undefined): V1ObjectMeta | undefined {
  if (!metadata) return metadata;
  const { managedFields: _managedFields, annotations, ...rest } = metadata;
  if (!annotations || !(lastAppliedAnnotation in annotations)) {
    return annotations ? { ...rest, annotations } : rest;
  }
  const { [lastAppliedAnnotation]: _lastApplied, ...kept } = annotations;
  return { ...rest, annotations: kept };
}

/** Any object: its metadata slimmed (slimMetadata), the rest as it was. The default of every informer. */
export function slimObject<T extends KubernetesObject>(object: T): T {
  if (!object.metadata) return object;
  return { ...object, metadata: slimMetadata(object.metadata) };
}

interface Container {
  name?: string;
  image?: string;
}

/** Workloads with a pod template: Deployments, StatefulSets, DaemonSets (and ReplicaSets). */
export type Workload = KubernetesObject & { spec?: { template?: V1PodTemplateSpec } };

const nameAndImage = (containers: Container[] | undefined) =>
  containers?.map(({ name, image }) => ({ name, image }));

/**
 * Of a pod template, only each container's name and image (init containers too): what a rollout's
 * "what changed" compares between revisions (rollouts/rollout-changes.ts).
 */
export function templateImagesOnly(template: V1PodTemplateSpec | undefined): V1PodTemplateSpec | undefined {
  if (!template?.spec) return undefined;
  // Containers without the rest of their fields: what the type calls required is not read here.
  return {
    spec: {
      containers: nameAndImage(template.spec.containers) ?? [],
      ...(template.spec.initContainers && { initContainers: nameAndImage(template.spec.initContainers) }),
    },
  } as V1PodTemplateSpec;
}

/**
 * A workload as the rollout controller reads it: slim metadata, its status, its spec without the
 * pod template's body and without a StatefulSet's volume claim templates. Of the pod template only its
 * labels (the Services that select its pods, for the url) and annotations (CI's deployment facts), and
 * each container's name and image, are kept.
 */
export function slimWorkload<T extends Workload>(workload: T): T {
  const slim = slimObject(workload);
  if (!workload.spec) return slim;
  const {
    template,
    volumeClaimTemplates: _claims,
    ...spec
  } = workload.spec as {
    template?: V1PodTemplateSpec;
    volumeClaimTemplates?: unknown;
  };
  if (!template) return { ...slim, spec };
  const templateSpec = template.spec && {
    containers: nameAndImage(template.spec.containers),
    ...(template.spec.initContainers && { initContainers: nameAndImage(template.spec.initContainers) }),
  };
  const metadata = template.metadata && {
    ...(template.metadata.labels && { labels: template.metadata.labels }),
    ...(template.metadata.annotations && { annotations: template.metadata.annotations }),
  };
  return { ...slim, spec: { ...spec, template: { metadata, spec: templateSpec } } };
}
