import { describe, expect, it } from "vitest";
import { readRolloutAnnotations } from "../../src/operator/rollouts/annotations.js";
import { eventsToEmit, rolloutPhase } from "../../src/operator/rollouts/phase.js";
import { deploymentFixture, rolloutStates } from "../support/deployments.js";

describe("rolloutPhase", () => {
  it("is progressing while new pods are not available yet, even though old pods keep Available=True", () => {
    expect(rolloutPhase(deploymentFixture(rolloutStates.started))).toEqual({ phase: "progressing" });
  });

  it("is ready once a pod of the new revision is available", () => {
    expect(rolloutPhase(deploymentFixture(rolloutStates.ready))).toEqual({ phase: "ready" });
  });

  it("is succeeded when the new ReplicaSet is available and no old pods remain", () => {
    expect(rolloutPhase(deploymentFixture(rolloutStates.succeeded))).toEqual({ phase: "succeeded" });
  });

  it("is failed on ProgressDeadlineExceeded, carrying the controller's message", () => {
    expect(rolloutPhase(deploymentFixture(rolloutStates.failed))).toEqual({
      phase: "failed",
      message: 'ReplicaSet "web-2" has timed out progressing.',
    });
  });

  it("concludes nothing until the controller observed the latest generation", () => {
    const stale = deploymentFixture({ ...rolloutStates.succeeded, generation: 3, observedGeneration: 2 });
    expect(rolloutPhase(stale)).toEqual({ phase: "progressing" });
  });

  it("treats a Deployment scaled to zero as ready, not stuck", () => {
    const zero = deploymentFixture({
      desired: 0,
      replicas: 0,
      availableCondition: "True",
      progressing: { status: "True", reason: "ReplicaSetUpdated" },
    });
    expect(rolloutPhase(zero)).toEqual({ phase: "ready" });
  });
});

describe("eventsToEmit", () => {
  it("emits every transition once and in order, filling gaps", () => {
    expect(eventsToEmit("succeeded", undefined)).toEqual([
      "deployment.created",
      "deployment.ready",
      "deployment.succeeded",
    ]);
    expect(
      eventsToEmit("succeeded", { status: "ready", emitted: ["deployment.created", "deployment.ready"] }),
    ).toEqual(["deployment.succeeded"]);
    expect(
      eventsToEmit("ready", { status: "ready", emitted: ["deployment.created", "deployment.ready"] }),
    ).toEqual([]);
    expect(eventsToEmit("failed", { status: "pending", emitted: ["deployment.created"] })).toEqual([
      "deployment.failed",
    ]);
  });

  it("lets a failed rollout that completes after its deadline go on to ready and succeeded", () => {
    const failed = { status: "failed" as const, emitted: ["deployment.created", "deployment.failed"] };
    expect(eventsToEmit("succeeded", failed)).toEqual(["deployment.ready", "deployment.succeeded"]);
    expect(eventsToEmit("ready", failed)).toEqual(["deployment.ready"]);
    expect(eventsToEmit("failed", failed)).toEqual([]);
    expect(eventsToEmit("progressing", failed)).toEqual([]);
  });

  it("emits nothing more once a rollout finished", () => {
    const done = {
      status: "succeeded" as const,
      emitted: ["deployment.created", "deployment.ready", "deployment.succeeded"],
    };
    expect(eventsToEmit("failed", done)).toEqual([]);
    expect(
      eventsToEmit("cancelled", { status: "failed", emitted: ["deployment.created", "deployment.failed"] }),
    ).toEqual([]);
  });
});

describe("readRolloutAnnotations", () => {
  it("prefers webhook-operator.io annotations, then common CI ones, then labels", () => {
    const deployment = deploymentFixture({
      annotations: {
        "webhook-operator.io/environment": "staging",
        "app.gitlab.com/env": "ignored",
        "app.gitlab.com/commit": "abc123",
        "kubernetes.io/change-cause": "Fix checkout",
        "webhook-operator.io/url": "https://shop.example.com",
      },
    });
    expect(readRolloutAnnotations(deployment)).toEqual({
      environment: "staging",
      branch: null,
      commitSha: "abc123",
      commitMessage: "Fix checkout",
      url: "https://shop.example.com",
    });
  });

  it("defaults the environment to production and reads pod template annotations", () => {
    const deployment = deploymentFixture({ templateAnnotations: { "webhook-operator.io/branch": "main" } });
    expect(readRolloutAnnotations(deployment)).toMatchObject({ environment: "production", branch: "main" });
  });
});
