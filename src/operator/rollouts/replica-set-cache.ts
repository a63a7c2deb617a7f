import type {
  AppsV1Api,
  KubernetesListObject,
  KubernetesObject,
  V1Deployment,
  V1ReplicaSet,
} from "@kubernetes/client-node";
import { type CacheTransform, templateImagesOnly } from "../cache-transforms.js";
import type { ResilientInformer } from "../informer.js";
import { listInPages } from "../paged-list.js";
import { revisionAnnotation } from "./phase.js";
import { type PreviousRevision, templateImages } from "./rollout-changes.js";
import { replicaSetCreatedAt } from "./rollout-times.js";

type InformerOf = <T extends KubernetesObject>(
  resource: string,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  transform?: CacheTransform<T>,
) => ResilientInformer<T>;

/**
 * A ReplicaSet as the rollout times and "what changed" read it: who owns it, which revision it is,
 * when it was created, and its pod template's container names and images. Nothing else of its spec or
 * status (the rest of a pod template each, the bulk of a ReplicaSet).
 */
export function slimReplicaSet(replicaSet: V1ReplicaSet): V1ReplicaSet {
  const metadata = replicaSet.metadata;
  if (!metadata) return replicaSet;
  const revision = metadata.annotations?.[revisionAnnotation];
  const template = templateImagesOnly(replicaSet.spec?.template);
  return {
    apiVersion: replicaSet.apiVersion,
    kind: replicaSet.kind,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp,
      ownerReferences: metadata.ownerReferences?.map(({ apiVersion, kind, name, uid, controller }) => ({
        apiVersion,
        kind,
        name,
        uid,
        controller,
      })),
      ...(revision !== undefined && { annotations: { [revisionAnnotation]: revision } }),
    },
    ...(template && { spec: { selector: {}, template } }),
  };
}

const indexKey = (ownerUid: string, revision: string) => `${ownerUid}/${revision}`;

/**
 * Every ReplicaSet's creation time by owner and revision, from an informer on ReplicaSets (slimmed), so
 * the start of a rollout first seen after it progressed costs no API request. One not in the cache
 * (its watch event still on the way) is asked for as before (rollout-times.ts). Its images are read
 * from the informer's own cache, for the revision a rollout replaces.
 */
export function replicaSetCache(options: { informer: InformerOf; apps: AppsV1Api }) {
  const created = new Map<string, Date>();
  // Its name, for the pods of a rollout that stalls (new-pods.ts): their pod-template-hash label.
  const names = new Map<string, string>();
  const informer = options.informer<V1ReplicaSet>(
    "replicasets",
    "/apis/apps/v1/replicasets",
    () => listInPages((page) => options.apps.listReplicaSetForAllNamespaces(page), slimReplicaSet),
    slimReplicaSet,
  );
  const keysOf = (replicaSet: V1ReplicaSet): string[] => {
    const revision = replicaSet.metadata?.annotations?.[revisionAnnotation];
    if (!revision) return [];
    return (replicaSet.metadata?.ownerReferences ?? []).map((owner) => indexKey(owner.uid, revision));
  };
  const remember = (replicaSet: V1ReplicaSet) => {
    const at = replicaSet.metadata?.creationTimestamp;
    const name = replicaSet.metadata?.name;
    for (const key of keysOf(replicaSet)) {
      if (at) created.set(key, new Date(at));
      if (name) names.set(key, name);
    }
  };
  informer.informer.on("add", remember);
  informer.informer.on("update", remember);
  informer.informer.on("delete", (replicaSet) => {
    for (const key of keysOf(replicaSet)) {
      created.delete(key);
      names.delete(key);
    }
  });

  return {
    /**
     * The revision the Deployment's current one replaces: its ReplicaSet with the highest revision
     * below the current one (a rollback gives the ReplicaSet it revives the next number, so the one
     * before is the revision that was running). Undefined for a first revision, or when that
     * ReplicaSet is gone (revisionHistoryLimit) or not cached yet.
     */
    previousRevision(deployment: V1Deployment): PreviousRevision | undefined {
      const uid = deployment.metadata?.uid;
      const current = Number(deployment.metadata?.annotations?.[revisionAnnotation]);
      if (!uid || !Number.isInteger(current)) return undefined;
      let best: { revision: number; replicaSet: V1ReplicaSet } | undefined;
      for (const replicaSet of informer.informer.list(deployment.metadata?.namespace)) {
        if (!(replicaSet.metadata?.ownerReferences ?? []).some((owner) => owner.uid === uid)) continue;
        const revision = Number(replicaSet.metadata?.annotations?.[revisionAnnotation]);
        if (Number.isInteger(revision) && revision < current && revision > (best?.revision ?? 0))
          best = { revision, replicaSet };
      }
      return (
        best && { revision: String(best.revision), images: templateImages(best.replicaSet.spec?.template) }
      );
    },
    /** When the ReplicaSet of the Deployment's current revision was created; undefined when unknown. */
    async createdAt(deployment: V1Deployment): Promise<Date | undefined> {
      const uid = deployment.metadata?.uid;
      const revision = deployment.metadata?.annotations?.[revisionAnnotation];
      if (!uid || !revision) return undefined;
      return created.get(indexKey(uid, revision)) ?? replicaSetCreatedAt(options.apps, deployment);
    },
    /** The name of the ReplicaSet of the Deployment's current revision, when the cache holds it. */
    nameOf(deployment: V1Deployment): string | undefined {
      const uid = deployment.metadata?.uid;
      const revision = deployment.metadata?.annotations?.[revisionAnnotation];
      return uid && revision ? names.get(indexKey(uid, revision)) : undefined;
    },
    start: () => informer.start(),
    stop: () => informer.stop(),
  };
}
