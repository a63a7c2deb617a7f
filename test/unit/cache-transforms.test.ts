import type { V1Deployment, V1ReplicaSet, V1StatefulSet } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { lastAppliedAnnotation, slimObject, slimWorkload } from "../../src/operator/cache-transforms.js";
import { readRolloutAnnotations } from "../../src/operator/rollouts/annotations.js";
import { rolloutPhase } from "../../src/operator/rollouts/phase.js";
import { slimReplicaSet } from "../../src/operator/rollouts/replica-set-cache.js";
import { noRouting, rolloutUrl } from "../../src/operator/rollouts/rollout-url.js";

const managedFields = [{ manager: "kubectl-client-side-apply", operation: "Update", fieldsV1: { f: {} } }];

/** A Deployment as `kubectl apply` leaves it, with every part the operator does not read. */
function appliedDeployment(): V1Deployment {
  const template = {
    metadata: {
      labels: { app: "shop" },
      annotations: { "webhook-operator.io/commit-sha": "abc123" },
    },
    spec: {
      containers: [
        {
          name: "web",
          image: "registry.example/shop:1.2",
          env: [{ name: "MODE", value: "production" }],
          ports: [{ containerPort: 8080 }],
          resources: { limits: { cpu: "1" } },
        },
      ],
      initContainers: [{ name: "migrate", image: "registry.example/shop-migrate:1.2", args: ["up"] }],
      volumes: [{ name: "cache", emptyDir: {} }],
    },
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "shop",
      namespace: "team-a",
      uid: "uid-1",
      resourceVersion: "42",
      generation: 3,
      labels: { team: "a", environment: "staging" },
      annotations: {
        "deployment.kubernetes.io/revision": "3",
        "webhook-operator.io/branch": "main",
        [lastAppliedAnnotation]: JSON.stringify({ spec: { template } }),
      },
      managedFields,
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "shop" } },
      strategy: { type: "RollingUpdate" },
      progressDeadlineSeconds: 600,
      template,
    },
    status: {
      observedGeneration: 3,
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 2,
      conditions: [
        { type: "Available", status: "True" },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
      ],
    },
  };
}

describe("slimObject", () => {
  it("drops managedFields and the last-applied annotation, and keeps the rest of the metadata", () => {
    const slim = slimObject(appliedDeployment());
    expect(slim.metadata?.managedFields).toBeUndefined();
    expect(slim.metadata?.annotations).toEqual({
      "deployment.kubernetes.io/revision": "3",
      "webhook-operator.io/branch": "main",
    });
    expect(slim.metadata).toMatchObject({ name: "shop", namespace: "team-a", uid: "uid-1", generation: 3 });
    expect(slim.metadata?.resourceVersion).toBe("42");
    expect(slim.metadata?.labels).toEqual({ team: "a", environment: "staging" });
  });

  it("leaves the object it was given as it was", () => {
    const deployment = appliedDeployment();
    slimObject(deployment);
    slimWorkload(deployment);
    expect(deployment).toEqual(appliedDeployment());
  });
});

describe("slimWorkload", () => {
  it("keeps of the pod template its labels, annotations and each container's name and image", () => {
    const slim = slimWorkload(appliedDeployment());
    expect(slim.spec?.template).toEqual({
      metadata: {
        labels: { app: "shop" },
        annotations: { "webhook-operator.io/commit-sha": "abc123" },
      },
      spec: {
        containers: [{ name: "web", image: "registry.example/shop:1.2" }],
        initContainers: [{ name: "migrate", image: "registry.example/shop-migrate:1.2" }],
      },
    });
  });

  it("keeps the rest of the spec and the whole status", () => {
    const slim = slimWorkload(appliedDeployment());
    const { template: _template, ...spec } = appliedDeployment().spec ?? {};
    expect(slim.spec).toMatchObject(spec);
    expect(slim.status).toEqual(appliedDeployment().status);
  });

  it("reads the same rollout phase, facts and url as the whole object", () => {
    const whole = appliedDeployment();
    const slim = slimWorkload(whole);
    expect(rolloutPhase(slim)).toEqual(rolloutPhase(whole));
    expect(readRolloutAnnotations(slim)).toEqual(readRolloutAnnotations(whole));
    expect(rolloutUrl(slim, noRouting)).toBe(rolloutUrl(whole, noRouting));
  });

  it("drops a StatefulSet's volume claim templates and keeps its update strategy", () => {
    const statefulSet: V1StatefulSet = {
      metadata: { name: "db", namespace: "team-a", managedFields },
      spec: {
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 1 } },
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }],
        template: { spec: { containers: [{ name: "db", image: "postgres:17", args: ["-c", "fsync=off"] }] } },
      },
      status: { replicas: 1, updateRevision: "db-2", currentRevision: "db-1" },
    };
    const slim = slimWorkload(statefulSet);
    expect(slim.spec).toEqual({
      serviceName: "db",
      selector: { matchLabels: { app: "db" } },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 1 } },
      template: { spec: { containers: [{ name: "db", image: "postgres:17" }] } },
    });
    expect(slim.status).toEqual(statefulSet.status);
    expect(slim.metadata?.managedFields).toBeUndefined();
  });
});

describe("slimReplicaSet", () => {
  it("keeps its owner, revision, creation and containers' images, and nothing else of its spec or status", () => {
    const created = "2026-11-27T10:00:00Z";
    const replicaSet: V1ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: "shop-5d9f",
        namespace: "team-a",
        uid: "rs-uid",
        resourceVersion: "7",
        creationTimestamp: created as unknown as Date,
        labels: { app: "shop", "pod-template-hash": "5d9f" },
        annotations: {
          "deployment.kubernetes.io/revision": "3",
          "deployment.kubernetes.io/desired-replicas": "2",
        },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: "shop",
            uid: "uid-1",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        managedFields,
      },
      spec: appliedDeployment().spec as V1ReplicaSet["spec"],
      status: { replicas: 2 },
    };
    expect(slimReplicaSet(replicaSet)).toEqual({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: "shop-5d9f",
        namespace: "team-a",
        uid: "rs-uid",
        resourceVersion: "7",
        creationTimestamp: created,
        annotations: { "deployment.kubernetes.io/revision": "3" },
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "Deployment", name: "shop", uid: "uid-1", controller: true },
        ],
      },
      // The images, for what a later rollout changed (rollouts/rollout-changes.ts).
      spec: {
        selector: {},
        template: {
          spec: {
            containers: [{ name: "web", image: "registry.example/shop:1.2" }],
            initContainers: [{ name: "migrate", image: "registry.example/shop-migrate:1.2" }],
          },
        },
      },
    });
  });
});
