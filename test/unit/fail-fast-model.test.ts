import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DeploymentStatus } from "../../src/deployments/schemas.js";
import { FailFastRule } from "../../src/operator/rollouts/fail-fast.js";
import { eventsToEmit, type RolloutPhase, statusAfter } from "../../src/operator/rollouts/phase.js";

// The fail-fast rule (fail-fast.ts) against a model, with random sequences of what can happen to one
// workload: looks at its pods (a problem or none, some pods Ready) at random moments while it is
// progressing, its controller
// reporting progressing, ready, succeeded or its own failure, a new revision, the workload deleted.
// The model says from the whole history, not step by step, when the rule must fire: on a look that
// finds a problem, when an earlier look (or this one) found one at least the grace period ago and no
// pod became Ready in between. The events the rollout row records are checked too: one
// deployment.failed per revision whoever fails it first, and a rollout that heals (an image pushed
// late) sends its ready and succeeded after it, as a deadline failure does.

const graceMs = 120_000;

type Command =
  | { kind: "look"; afterMs: number; blocked: boolean; readyPods: number }
  | { kind: "controller"; phase: "progressing" | "ready" | "succeeded" | "failed" }
  | { kind: "new revision" }
  | { kind: "deleted" };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("look" as const),
      afterMs: fc.integer({ min: 0, max: 70_000 }),
      blocked: fc.boolean(),
      readyPods: fc.integer({ min: 0, max: 3 }),
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("controller" as const),
      phase: fc.constantFrom(
        "progressing" as const,
        "ready" as const,
        "succeeded" as const,
        "failed" as const,
      ),
    }),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: "new revision" as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: "deleted" as const }), weight: 1 },
);

interface Look {
  at: number;
  blocked: boolean;
  readyPods: number;
}

/** The rule as docs/kubernetes.md states it, from the looks of the revision so far (the last is now). */
function modelFires(looks: Look[], firedBefore: boolean): boolean {
  const i = looks.length - 1;
  const now = looks[i];
  if (firedBefore || !now?.blocked) return false;
  const progressAt = (k: number) =>
    (looks[k]?.readyPods ?? 0) > (k === 0 ? 0 : (looks[k - 1]?.readyPods ?? 0));
  for (let j = 0; j <= i; j++) {
    const from = looks[j] as Look;
    if (!from.blocked || now.at - from.at < graceMs) continue;
    let progressed = false;
    for (let k = j + 1; k <= i; k++) if (progressAt(k)) progressed = true;
    if (!progressed) return true;
  }
  return false;
}

describe("the fail-fast rule against a model", () => {
  it("fires when the model says, once per revision, and the rollout's events stay a valid path", () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 60 }), (commands) => {
        const rule = new FailFastRule(graceMs);
        let now = 0;
        let revision = 1;
        let looks: Look[] = [];
        let fired = false;
        let controller: RolloutPhase = { phase: "progressing" };
        let row: { status: DeploymentStatus; emitted: string[] } | undefined;
        const record = () => {
          const phase = rule.phase("uid", String(revision), controller);
          const events = eventsToEmit(phase.phase, row);
          if (events.length > 0)
            row = { status: statusAfter[phase.phase], emitted: [...(row?.emitted ?? []), ...events] };
          return phase;
        };
        const newRollout = () => {
          looks = [];
          fired = false;
          controller = { phase: "progressing" };
          row = undefined;
        };
        for (const step of commands) {
          if (step.kind === "look") {
            now += step.afterMs;
            // The diagnosis looks only at a rollout its controller reports progressing and that has not
            // succeeded (rollout-diagnosis.ts, and the controllers' record of what they recorded).
            if (controller.phase !== "progressing" || row?.status === "succeeded") continue;
            looks.push({ at: now, blocked: step.blocked, readyPods: step.readyPods });
            const expected = modelFires(looks, fired);
            const actual = rule.observe(
              "uid",
              String(revision),
              looks.at(-1) as Look,
              () => "ImagePullBackOff",
            );
            expect(actual).toBe(expected);
            fired ||= expected;
          } else if (step.kind === "controller") {
            controller =
              step.phase === "failed" ? { phase: "failed", message: "deadline" } : { phase: step.phase };
          } else if (step.kind === "new revision") {
            revision += 1;
            newRollout();
          } else {
            rule.forget("uid");
            newRollout();
          }
          const phase = record();
          // Failed by the rule: the controller's progressing reads as failed; its ready heals it.
          if (fired && controller.phase === "progressing")
            expect(phase).toEqual({ phase: "failed", message: "ImagePullBackOff" });
          else expect(phase).toEqual(controller);
          expect(rule.fired("uid", String(revision))).toBe(fired);
          const emitted = row?.emitted ?? [];
          expect(emitted.filter((e) => e === "deployment.failed").length).toBeLessThanOrEqual(1);
          expect(emitted.filter((e) => e === "deployment.succeeded").length).toBeLessThanOrEqual(1);
          if (fired) expect(emitted).toContain("deployment.failed");
          // After succeeded nothing more; after failed only the recovery (ready, succeeded).
          const afterFailed = emitted.slice(emitted.indexOf("deployment.failed") + 1);
          if (emitted.includes("deployment.failed"))
            expect(afterFailed.every((e) => e === "deployment.ready" || e === "deployment.succeeded")).toBe(
              true,
            );
        }
      }),
      { numRuns: Number(process.env.FAIL_FAST_MODEL_RUNS ?? 400) },
    );
  });

  it("fires on a crash loop seen between back-offs, but never on a pull that failed once before a slow start", () => {
    const rule = new FailFastRule(graceMs);
    const look = (at: number, blocked: boolean, readyPods = 0) =>
      rule.observe("crash", "1", { at: at * 1000, blocked, readyPods }, () => "CrashLoopBackOff");
    // Running between back-offs reads as no problem: the clock keeps its start.
    expect([look(15, true), look(45, false), look(75, true), look(105, false), look(135, true)]).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
    const slow = (at: number, blocked: boolean) =>
      rule.observe("slow", "1", { at: at * 1000, blocked, readyPods: 0 }, () => "ErrImagePull");
    expect([slow(15, true), slow(45, false), slow(135, false), slow(300, false)]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
