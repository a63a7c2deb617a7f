import type { RolloutFailure } from "../../formats/rollout-failure.js";
import { FailFastRule } from "./fail-fast.js";
import { failureMessage, failureReport, type RedactionSettings } from "./failure-report.js";
import type { RolloutPhase } from "./phase.js";
import { lookAtPods } from "./pod-look.js";
import type { NewPods, PodSource } from "./pod-source.js";

// When the operator looks at a rollout's pods, and what it makes of it, for every workload kind. It
// looks only at a rollout that is progressing and not yet ready: first after `delayMs` (most rollouts
// have a new pod ready by then and cost nothing), then every `intervalMs`, and no more after `forMs`
// (a rollout that waits on people, OnDelete). One report at the failure, however it came.

export const lookTiming = { delayMs: 15_000, intervalMs: 30_000, forMs: 15 * 60_000 };

/** ROLLOUT_FAIL_FAST, ROLLOUT_FAIL_FAST_AFTER_SECONDS, ROLLOUT_LOG_LINES, ROLLOUT_REDACT_WORDS. */
export interface DiagnosisSettings extends RedactionSettings {
  failFast: boolean;
  failFastAfterSeconds: number;
}

export interface Diagnosed {
  /** The phase to record: the controller's, or failed when the rule fired. */
  phase: RolloutPhase;
  /** Why it failed, on a failed phase when the pods could be read and show a problem. */
  failure?: RolloutFailure;
  /** When to reconcile again to look, if nothing changes meanwhile. */
  recheckInMs?: number;
}

interface Seen {
  revision: string;
  since: number;
  lastLook?: number;
  failure?: RolloutFailure;
  reported: boolean;
}

export class RolloutDiagnosis {
  private readonly rule: FailFastRule;
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly reads: PodSource,
    private readonly settings: DiagnosisSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.rule = new FailFastRule(settings.failFastAfterSeconds * 1000);
  }

  async diagnose(
    uid: string,
    revision: string,
    controller: RolloutPhase,
    pods: () => NewPods | undefined,
  ): Promise<Diagnosed> {
    const now = this.now();
    let seen = this.seen.get(uid);
    if (seen?.revision !== revision) {
      seen = { revision, since: now, reported: false };
      this.seen.set(uid, seen);
    }
    if (controller.phase === "succeeded") {
      this.forget(uid);
      return { phase: controller };
    }
    const phase = this.rule.phase(uid, revision, controller);
    if (phase.phase === "failed") return { phase, failure: await this.report(seen, pods, false) };
    if (controller.phase !== "progressing" || !this.settings.failFast) return { phase };

    const waited = now - seen.since;
    if (waited >= lookTiming.forMs) return { phase };
    const due = Math.max(
      lookTiming.delayMs - waited,
      seen.lastLook === undefined ? 0 : seen.lastLook + lookTiming.intervalMs - now,
    );
    if (due > 0) return { phase, recheckInMs: due };
    seen.lastLook = now;
    const selection = pods();
    const look = selection && (await lookAtPods(this.reads, selection, "poll", this.settings));
    const again = { phase, recheckInMs: lookTiming.intervalMs };
    if (!look) return again;
    const early = failureReport(look.problems, [], true);
    const fired = this.rule.observe(uid, revision, { at: now, ...look }, () =>
      early ? failureMessage(early, this.settings.failFastAfterSeconds) : "",
    );
    if (!fired) return again;
    return {
      phase: this.rule.phase(uid, revision, controller),
      failure: await this.report(seen, pods, true),
    };
  }

  /** The failure of a failed rollout, read once (a report look); later reconciles reuse it. */
  private async report(
    seen: Seen,
    pods: () => NewPods | undefined,
    early: boolean,
  ): Promise<RolloutFailure | undefined> {
    if (seen.reported) return seen.failure;
    seen.reported = true;
    const selection = pods();
    const look = selection && (await lookAtPods(this.reads, selection, "report", this.settings));
    seen.failure = look && failureReport(look.problems, look.events, early);
    return seen.failure;
  }

  forget(uid: string): void {
    this.seen.delete(uid);
    this.rule.forget(uid);
  }
}
