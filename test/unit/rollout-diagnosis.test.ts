import { describe, expect, it } from "vitest";
import { RolloutDiagnosis } from "../../src/operator/rollouts/rollout-diagnosis.js";
import { diagnosisDefaults } from "../support/diagnosis-defaults.js";
import { probeEvent, recorded, recordedPods, webNewPods } from "../support/recorded-pods.js";

// When the diagnosis reads pods (rollout-diagnosis.ts), on a clock of the test's: never while the rule
// is off and the rollout only progresses, once when it fails at its deadline, never again after.

describe("RolloutDiagnosis", () => {
  it("with ROLLOUT_FAIL_FAST=false reads the pods once, at the failure, and carries what they say", async () => {
    let now = 0;
    const source = recordedPods([recorded.probeFailing], [probeEvent]);
    const diagnosis = new RolloutDiagnosis(source, { ...diagnosisDefaults, failFast: false }, () => now);
    for (now = 0; now <= 600_000; now += 30_000) {
      expect(await diagnosis.diagnose("uid", "3", { phase: "progressing" }, () => webNewPods)).toEqual({
        phase: { phase: "progressing" },
      });
    }
    expect(source.reads).toEqual([]);
    const deadline = { phase: "failed" as const, message: 'Deployment "web" has timed out progressing.' };
    const failed = await diagnosis.diagnose("uid", "3", deadline, () => webNewPods);
    expect(failed.phase).toEqual(deadline);
    expect(failed.failure).toMatchObject({ reason: "Unhealthy", failed_early: false });
    const reads = source.reads.length;
    await diagnosis.diagnose("uid", "3", deadline, () => webNewPods);
    expect(source.reads).toHaveLength(reads);
  });

  it("stops looking at a rollout that waits on people after 15 minutes", async () => {
    let now = 0;
    const source = recordedPods([]);
    const diagnosis = new RolloutDiagnosis(source, diagnosisDefaults, () => now);
    // Reconciled when it asks to be, as the work queue does, until it asks no more.
    const looks: number[] = [];
    for (;;) {
      const before = source.reads.length;
      const { recheckInMs } = await diagnosis.diagnose(
        "uid",
        "1",
        { phase: "progressing" },
        () => webNewPods,
      );
      if (source.reads.length > before) looks.push(now / 1000);
      if (recheckInMs === undefined) break;
      now += recheckInMs;
    }
    // A look at 15 s, then every 30 s until 15 minutes: 30 of them, then none.
    expect(looks).toEqual(Array.from({ length: 30 }, (_, i) => 15 + 30 * i));
  });
});
