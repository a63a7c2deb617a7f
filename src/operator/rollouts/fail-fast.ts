import type { RolloutPhase } from "./phase.js";

// ROLLOUT_FAIL_FAST: a rollout whose new pods show a problem that waiting does not mend (an image that
// is not there, a crash loop, a missing key, no node that fits, a probe that keeps failing) is failed
// when the problem has stood for ROLLOUT_FAIL_FAST_AFTER_SECONDS without the rollout making progress,
// rather than at its progress deadline. docs/kubernetes.md, "Failing early", argues the choices.

/** One look at a rollout's new pods. */
export interface PodsObservation {
  /** Milliseconds since the epoch; observations of one rollout come in time order. */
  at: number;
  /** The diagnosis found a problem (pod-problems.ts). */
  blocked: boolean;
  /** How many of the new revision's pods are Ready. */
  readyPods: number;
}

interface RolloutState {
  revision: string;
  readyPods: number;
  /** Since when problems have been seen with no progress in between. */
  blockedSince: number | undefined;
  /** Set when the rule fired: the rollout stays failed until its controller says it is ready. */
  failedWith: string | undefined;
}

/**
 * The rule, per rollout (workload UID and revision), for one leadership term. Progress (one more pod
 * Ready) starts the clock again; a look that finds no problem does not, since a crash loop shows its
 * container running between back-offs, but the rule fires only on a look that finds one, so a pull
 * that failed once and then worked never fails a slow start.
 */
export class FailFastRule {
  private readonly rollouts = new Map<string, RolloutState>();

  constructor(private readonly graceMs: number) {}

  /** Records a look; true when the rule fires on it (once per rollout). */
  observe(uid: string, revision: string, seen: PodsObservation, message: () => string): boolean {
    let state = this.rollouts.get(uid);
    if (state?.revision !== revision) {
      state = { revision, readyPods: 0, blockedSince: undefined, failedWith: undefined };
      this.rollouts.set(uid, state);
    }
    if (state.failedWith !== undefined) return false;
    if (seen.readyPods > state.readyPods) state.blockedSince = undefined;
    state.readyPods = seen.readyPods;
    if (!seen.blocked) return false;
    state.blockedSince ??= seen.at;
    if (seen.at - state.blockedSince < this.graceMs) return false;
    state.failedWith = message();
    return true;
  }

  /**
   * The phase to record: the controller's own, unless it says progressing and the rule failed this
   * revision, which stays failed (its deployment.failed was sent) until the controller reports it
   * ready, when the rollout recovers as one failed at its deadline does (phase.ts, eventsToEmit).
   */
  phase(uid: string, revision: string, controller: RolloutPhase): RolloutPhase {
    const state = this.rollouts.get(uid);
    if (controller.phase !== "progressing" || state?.revision !== revision || !state.failedWith)
      return controller;
    return { phase: "failed", message: state.failedWith };
  }

  /** Whether the rule failed this revision already (nothing more to look at). */
  fired(uid: string, revision: string): boolean {
    const state = this.rollouts.get(uid);
    return state?.revision === revision && state.failedWith !== undefined;
  }

  forget(uid: string): void {
    this.rollouts.delete(uid);
  }
}
