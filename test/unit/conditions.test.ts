import { describe, expect, it } from "vitest";
import { setCondition } from "../../src/operator/api/conditions.js";
import type { Condition } from "../../src/operator/api/webhook-v1alpha1.js";

// setCondition behaves like apimachinery's meta.SetStatusCondition. The list keeps its order: the status
// is compared as JSON before it is written, so a reordered list would be a write for nothing.

const earlier = new Date("2026-06-01T00:00:00.000Z");
const later = new Date("2026-06-01T01:00:00.000Z");
const ready: Condition = {
  type: "Ready",
  status: "True",
  reason: "Reconciled",
  message: "ok",
  lastTransitionTime: earlier.toISOString(),
};
const healthy: Condition = { ...ready, type: "Healthy", reason: "Delivering" };

describe("setCondition", () => {
  it("replaces a condition in its place, keeping the others and their order", () => {
    const next = setCondition(
      [ready, healthy],
      { type: "Ready", status: "True", reason: "Reconciled", message: "again" },
      later,
    );
    expect(next.map((condition) => condition.type)).toEqual(["Ready", "Healthy"]);
    expect(next[0]).toMatchObject({ message: "again", lastTransitionTime: earlier.toISOString() });
    expect(next[1]).toBe(healthy);
  });

  it("moves lastTransitionTime only when the status changes, and appends a new type", () => {
    const failed = setCondition(
      [ready, healthy],
      { type: "Healthy", status: "False", reason: "Failing", message: "" },
      later,
    );
    expect(failed[1]).toMatchObject({ status: "False", lastTransitionTime: later.toISOString() });
    const added = setCondition(
      [ready],
      { type: "Healthy", status: "Unknown", reason: "NoDeliveries", message: "" },
      later,
    );
    expect(added.map((condition) => condition.type)).toEqual(["Ready", "Healthy"]);
  });
});
