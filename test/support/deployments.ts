import type { V1Deployment } from "@kubernetes/client-node";

export interface RolloutShape {
  uid?: string;
  name?: string;
  namespace?: string;
  revision?: string;
  generation?: number;
  observedGeneration?: number;
  desired?: number;
  replicas?: number;
  updated?: number;
  available?: number;
  availableCondition?: "True" | "False";
  progressing?: { status: "True" | "False"; reason: string; message?: string };
  annotations?: Record<string, string>;
  templateAnnotations?: Record<string, string>;
}

/** An apps/v1 Deployment as the Deployment controller reports it, for the given rollout state. */
export function deploymentFixture(shape: RolloutShape = {}): V1Deployment {
  const generation = shape.generation ?? 1;
  const conditions = [];
  if (shape.availableCondition) {
    conditions.push({
      type: "Available",
      status: shape.availableCondition,
      reason: "MinimumReplicasAvailable",
    });
  }
  if (shape.progressing) conditions.push({ type: "Progressing", ...shape.progressing });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: shape.name ?? "web",
      namespace: shape.namespace ?? "shop",
      uid: shape.uid ?? "uid-web",
      generation,
      annotations: {
        ...(shape.revision === undefined ? { "deployment.kubernetes.io/revision": "1" } : {}),
        ...(shape.revision ? { "deployment.kubernetes.io/revision": shape.revision } : {}),
        ...shape.annotations,
      },
    },
    spec: {
      replicas: shape.desired ?? 2,
      selector: { matchLabels: { app: shape.name ?? "web" } },
      template: {
        metadata: { labels: { app: shape.name ?? "web" }, annotations: shape.templateAnnotations },
        spec: { containers: [] },
      },
    },
    status: {
      observedGeneration: shape.observedGeneration ?? generation,
      replicas: shape.replicas ?? shape.desired ?? 2,
      updatedReplicas: shape.updated ?? 0,
      availableReplicas: shape.available ?? 0,
      conditions,
    },
  };
}

/** The phases of one rollout of a 2-replica Deployment. */
export const rolloutStates = {
  started: {
    updated: 1,
    replicas: 3,
    available: 2,
    availableCondition: "True",
    progressing: { status: "True", reason: "ReplicaSetUpdated" },
  },
  ready: {
    updated: 2,
    replicas: 3,
    available: 3,
    availableCondition: "True",
    progressing: { status: "True", reason: "ReplicaSetUpdated" },
  },
  succeeded: {
    updated: 2,
    replicas: 2,
    available: 2,
    availableCondition: "True",
    progressing: { status: "True", reason: "NewReplicaSetAvailable" },
  },
  failed: {
    updated: 1,
    replicas: 3,
    available: 2,
    availableCondition: "True",
    progressing: {
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "web-2" has timed out progressing.',
    },
  },
} satisfies Record<string, RolloutShape>;
