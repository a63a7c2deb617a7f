import { describe, expect, it } from "vitest";
import { rolloutFinishedAt, rolloutStartedAt } from "../../src/operator/rollouts/rollout-times.js";

const at = (time: string) => new Date(`2026-11-25T12:00:${time}Z`);

describe("rolloutStartedAt", () => {
  it.each([
    ["the ReplicaSet's creation when known", at("03.000"), at("09.812"), at("03.000")],
    ["else the second the operator first saw it", undefined, at("09.812"), at("09.000")],
  ])("is %s", (_, replicaSetCreated, now, expected) => {
    expect(rolloutStartedAt(replicaSetCreated, now)).toEqual(expected);
  });
});

describe("rolloutFinishedAt", () => {
  it.each([
    ["the controller's conclusion", at("01.000"), at("04.000"), at("09.500"), at("04.000")],
    // First seen at .700, concluded at .900 of the same second: Kubernetes says 00.000.
    [
      "never before started_at (Kubernetes keeps whole seconds)",
      at("00.000"),
      at("00.000"),
      at("00.950"),
      at("00.000"),
    ],
    [
      "never before started_at (another machine's clock behind)",
      at("05.000"),
      at("03.000"),
      at("09.500"),
      at("05.000"),
    ],
    ["never after now (an API server's clock ahead)", at("01.000"), at("30.000"), at("09.500"), at("09.000")],
    ["now when the controller reported no time", at("01.000"), undefined, at("09.500"), at("09.000")],
    ["whole seconds whatever it is given", null, at("04.250"), at("09.500"), at("04.000")],
  ])("is %s", (_, startedAt, concluded, now, expected) => {
    expect(rolloutFinishedAt(startedAt, concluded, now)).toEqual(expected);
  });

  it("is never earlier than started_at, and both are whole seconds, whatever the clocks say", () => {
    const day = Date.UTC(2026, 10, 25);
    for (let seen = 0; seen < 3000; seen += 37) {
      for (let skew = -2000; skew <= 2000; skew += 125) {
        const started = rolloutStartedAt(undefined, new Date(day + seen));
        const finished = rolloutFinishedAt(started, new Date(day + seen + skew), new Date(day + seen + 50));
        expect(finished.getTime()).toBeGreaterThanOrEqual(started.getTime());
        expect([started.getMilliseconds(), finished.getMilliseconds()]).toEqual([0, 0]);
      }
    }
  });
});
