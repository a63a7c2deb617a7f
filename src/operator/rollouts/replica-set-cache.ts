import type {
  AppsV1Api,
  KubernetesListObject,
  KubernetesObject,
  V1Deployment,
  V1ReplicaSet,
} from "@kubernetes/client-node";
import type { CacheTransform } from "../cache-transforms.js";
import type { ResilientInformer } from "../informer.js";
import { listInPages } from "../paged-list.js";
import { revisionAnnotation } from "./phase.js";
import { replicaSetCreatedAt } from "./rollout-times.js";

type InformerOf = <T extends KubernetesObject>(
  resource: string,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  transform?: CacheTransform<T>,
) => ResilientInformer<T>;

/**
 * A ReplicaSet as the rollout times read it: who owns it, which revision it is and when it was
 * created. Nothing of its spec or status (a pod template each, the bulk of a ReplicaSet).
 */
export function slimReplicaSet(replicaSet: V1ReplicaSet): V1ReplicaSet {
  const metadata = replicaSet.metadata;
  if (!metadata) return replicaSet;
  const revision = metadata.annotations?.[revisionAnnotation];
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
  };
}

const indexKey = (ownerUid: string, revision: string) => `${ownerUid}/${revision}`;

/**
 * Every ReplicaSet's creation time by owner and revision, from an informer on ReplicaSets (slimmed), so
 * the start of a rollout first seen after it progressed costs no API request. One not in the cache
 * (its watch event still on the way) is asked for as before (rollout-times.ts).
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
