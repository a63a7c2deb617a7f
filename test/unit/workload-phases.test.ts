import type { V1ControllerRevision, V1DaemonSet, V1StatefulSet } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { daemonSetProgress, daemonSetRevision } from "../../src/operator/rollouts/daemonset-phase.js";
import {
  ProgressClock,
  phaseAtDeadline,
  progressDeadlineSeconds,
  type WorkloadProgress,
} from "../../src/operator/rollouts/progress-deadline.js";
import {
  type ControllerRevisions,
  newestRevisionCreatedAt,
  statefulSetProgress,
  statefulSetRevision,
} from "../../src/operator/rollouts/statefulset-phase.js";

// The rollout phases of StatefulSets and DaemonSets, read from the shapes their controllers report.

function statefulSet(shape: {
  desired?: number;
  generation?: number;
  observedGeneration?: number;
  replicas?: number;
  updated?: number;
  available?: number;
  partition?: number;
  onDelete?: boolean;
}): V1StatefulSet {
  const desired = shape.desired ?? 3;
  return {
    metadata: { name: "db", namespace: "shop", uid: "uid-db", generation: shape.generation ?? 2 },
    spec: {
      replicas: desired,
      serviceName: "db",
      selector: { matchLabels: { app: "db" } },
      template: {},
      updateStrategy: shape.onDelete
        ? { type: "OnDelete" }
        : { type: "RollingUpdate", rollingUpdate: { partition: shape.partition } },
    },
    status: {
      observedGeneration: shape.observedGeneration ?? shape.generation ?? 2,
      replicas: shape.replicas ?? desired,
      updatedReplicas: shape.updated ?? 0,
      readyReplicas: shape.available ?? 0,
      availableReplicas: shape.available ?? 0,
    },
  };
}

describe("statefulSetProgress", () => {
  it.each([
    [
      "the controller has not observed the new spec",
      { observedGeneration: 1, updated: 3, available: 3 },
      "progressing",
    ],
    ["no pod of the update revision yet", { updated: 0, available: 3 }, "progressing"],
    ["the highest pod replaced, not yet available", { updated: 1, available: 2 }, "progressing"],
    ["the first updated pod available", { updated: 1, available: 3 }, "ready"],
    ["every pod updated, one not yet available", { updated: 3, available: 2 }, "ready"],
    ["every pod updated and available", { updated: 3, available: 3 }, "succeeded"],
    [
      "partition 2 of 4: the two pods at or above it updated",
      { desired: 4, partition: 2, updated: 2, available: 4 },
      "succeeded",
    ],
    [
      "partition 2 of 4: one of its two pods updated",
      { desired: 4, partition: 2, updated: 1, available: 4 },
      "ready",
    ],
    [
      "partition above the replicas: nothing to update",
      { partition: 5, updated: 0, available: 3 },
      "succeeded",
    ],
    ["OnDelete before anyone deleted a pod", { onDelete: true, updated: 0, available: 3 }, "progressing"],
    ["OnDelete with one pod deleted and back", { onDelete: true, updated: 1, available: 3 }, "ready"],
    ["OnDelete with every pod replaced", { onDelete: true, updated: 3, available: 3 }, "succeeded"],
    ["scaled to zero", { desired: 0, replicas: 0 }, "succeeded"],
  ] as const)("%s → %s", (_, shape, phase) => {
    expect(statefulSetProgress(statefulSet(shape)).phase).toBe(phase);
  });

  it("marks OnDelete rollouts, and its counters change when a pod moves", () => {
    expect(statefulSetProgress(statefulSet({ onDelete: true })).onDelete).toBe(true);
    expect(statefulSetProgress(statefulSet({})).onDelete).toBe(false);
    const before = statefulSetProgress(statefulSet({ updated: 1, available: 2 }));
    const after = statefulSetProgress(statefulSet({ updated: 1, available: 3 }));
    expect(after.counters).not.toBe(before.counters);
    expect(before.summary).toBe("1 of 3 pods updated, 2 of 3 available");
  });
});

describe("statefulSetRevision", () => {
  const revision = (name: string, number: number, owner = "uid-db", created = "2026-11-27T10:00:00Z") =>
    ({
      metadata: { name, namespace: "shop", ownerReferences: [{ uid: owner }], creationTimestamp: created },
      revision: number,
    }) as unknown as V1ControllerRevision;
  const cache = (...items: V1ControllerRevision[]): ControllerRevisions => ({
    get: (_, name) => items.find((item) => item.metadata?.name === name),
    list: () => items,
  });
  const updating = (name: string) => {
    const sts = statefulSet({});
    if (sts.status) sts.status.updateRevision = name;
    return sts;
  };

  it("is the number of the update revision, newest of the StatefulSet's", () => {
    const revisions = cache(revision("db-a", 1), revision("db-b", 2), revision("other-c", 9, "uid-other"));
    expect(statefulSetRevision(updating("db-b"), revisions)).toBe("2");
  });

  it("waits while the cache lacks it, or holds it with an older number than another (a rollback not yet seen)", () => {
    expect(statefulSetRevision(updating("db-c"), cache(revision("db-a", 1)))).toBeUndefined();
    expect(
      statefulSetRevision(updating("db-a"), cache(revision("db-a", 1), revision("db-b", 2))),
    ).toBeUndefined();
    expect(statefulSetRevision(updating("db-a"), cache(revision("db-a", 3), revision("db-b", 2)))).toBe("3");
  });

  it("counts one up where the controller gave a new revision the number of the one before", () => {
    // The StatefulSet changed within a second of its creation: the controller's cache of its
    // ControllerRevisions did not hold the first yet, and numbered the second 1 too.
    const first = revision("db-a", 1, "uid-db", "2026-11-27T10:00:00Z");
    const second = revision("db-b", 1, "uid-db", "2026-11-27T10:00:01Z");
    expect(statefulSetRevision(updating("db-a"), cache(first))).toBe("1");
    expect(statefulSetRevision(updating("db-b"), cache(first, second))).toBe("2");
    // The next one the controller numbers 2 (its own highest plus one): it follows, 3.
    const third = revision("db-c", 2, "uid-db", "2026-11-27T10:05:00Z");
    expect(statefulSetRevision(updating("db-c"), cache(first, second, third))).toBe("3");
    // The earlier of the two is not the newest: its StatefulSet would be waiting for a renumbering.
    expect(statefulSetRevision(updating("db-a"), cache(first, second))).toBeUndefined();
  });

  it("ignores a ControllerRevision of the same name owned by something else", () => {
    expect(statefulSetRevision(updating("db-a"), cache(revision("db-a", 1, "uid-other")))).toBeUndefined();
  });

  it("dates the rollout by its newest ControllerRevision", () => {
    const revisions = cache(revision("db-a", 1), revision("db-b", 2, "uid-db", "2026-11-27T11:00:00Z"));
    expect(newestRevisionCreatedAt(statefulSet({}), revisions)).toEqual(new Date("2026-11-27T11:00:00Z"));
  });
});

function daemonSet(shape: {
  generation?: number;
  observedGeneration?: number;
  desired?: number;
  current?: number;
  updated?: number;
  available?: number;
  onDelete?: boolean;
  templateGeneration?: string;
}): V1DaemonSet {
  const desired = shape.desired ?? 3;
  return {
    metadata: {
      name: "agent",
      namespace: "shop",
      uid: "uid-agent",
      generation: shape.generation ?? 2,
      annotations:
        shape.templateGeneration === undefined
          ? {}
          : { "deprecated.daemonset.template.generation": shape.templateGeneration },
    },
    spec: {
      selector: { matchLabels: { app: "agent" } },
      template: {},
      updateStrategy: { type: shape.onDelete ? "OnDelete" : "RollingUpdate" },
    },
    status: {
      observedGeneration: shape.observedGeneration ?? shape.generation ?? 2,
      desiredNumberScheduled: desired,
      currentNumberScheduled: shape.current ?? desired,
      updatedNumberScheduled: shape.updated ?? 0,
      numberAvailable: shape.available ?? 0,
      numberReady: shape.available ?? 0,
      numberMisscheduled: 0,
    },
  };
}

describe("daemonSetProgress and daemonSetRevision", () => {
  it.each([
    [
      "the controller has not observed the new spec",
      { observedGeneration: 1, updated: 3, available: 3 },
      "progressing",
    ],
    ["one node's old pod gone, its new one not available", { updated: 1, available: 2 }, "progressing"],
    ["the first updated pod available", { updated: 1, available: 3 }, "ready"],
    ["every node updated and available", { updated: 3, available: 3 }, "succeeded"],
    ["no node to run on", { desired: 0, current: 0 }, "succeeded"],
    ["OnDelete before anyone deleted a pod", { onDelete: true, updated: 0, available: 3 }, "progressing"],
  ] as const)("%s → %s", (_, shape, phase) => {
    expect(daemonSetProgress(daemonSet(shape)).phase).toBe(phase);
  });

  it("takes the revision from the template generation the API server keeps", () => {
    expect(daemonSetRevision(daemonSet({ templateGeneration: "4" }))).toBe("4");
    expect(daemonSetRevision(daemonSet({}))).toBeUndefined();
    expect(daemonSetRevision(daemonSet({ templateGeneration: "x" }))).toBeUndefined();
  });
});

describe("the progress deadline", () => {
  const withAnnotation = (value?: string) => ({
    metadata: {
      annotations: Object.fromEntries(
        value === undefined ? [] : [["webhook-operator.io/progress-deadline-seconds", value]],
      ) as Record<string, string>,
    },
  });

  it.each([
    [undefined, false, 600],
    [undefined, true, undefined],
    ["30", false, 30],
    ["30", true, 30],
    ["0", false, undefined],
    ["ten", false, 600],
    ["-5", false, 600],
  ] as const)("annotation %s, OnDelete %s → %s seconds", (value, onDelete, seconds) => {
    expect(progressDeadlineSeconds(withAnnotation(value), onDelete)).toBe(seconds);
  });

  const progress: WorkloadProgress = {
    phase: "ready",
    counters: "2/3/1/3/3",
    summary: "1 of 3 pods updated, 3 of 3 available",
    onDelete: false,
  };
  const since = new Date("2026-11-27T12:00:00Z");
  const at = (seconds: number) => ({
    since,
    now: new Date(since.getTime() + seconds * 1000),
    deadlineSeconds: 60 as number | undefined,
    kind: "StatefulSet" as const,
    name: "db",
  });

  it("keeps the status's phase before the deadline, and says when to look again", () => {
    expect(phaseAtDeadline(progress, at(45))).toEqual({ phase: { phase: "ready" }, recheckInMs: 15_100 });
  });

  it("fails a rollout that made no progress for the deadline, saying where it stopped", () => {
    expect(phaseAtDeadline(progress, at(60)).phase).toEqual({
      phase: "failed",
      message:
        'StatefulSet "db" made no progress for 60 seconds (its progress deadline, ' +
        "webhook-operator.io/progress-deadline-seconds): 1 of 3 pods updated, 3 of 3 available.",
    });
  });

  it("never fails a succeeded rollout, nor one without a deadline", () => {
    expect(phaseAtDeadline({ ...progress, phase: "succeeded" }, at(999))).toEqual({
      phase: { phase: "succeeded" },
    });
    expect(phaseAtDeadline(progress, { ...at(999), deadlineSeconds: undefined })).toEqual({
      phase: { phase: "ready" },
    });
  });

  it("restarts the clock when the counters or the revision change, not otherwise", () => {
    const clock = new ProgressClock();
    const t = (seconds: number) => new Date(since.getTime() + seconds * 1000);
    expect(clock.observe("uid", "1", "a", t(0))).toEqual(t(0));
    expect(clock.observe("uid", "1", "a", t(30))).toEqual(t(0));
    expect(clock.observe("uid", "1", "b", t(40))).toEqual(t(40));
    expect(clock.observe("uid", "2", "b", t(50))).toEqual(t(50));
    clock.forget("uid");
    expect(clock.observe("uid", "2", "b", t(60))).toEqual(t(60));
  });
});
