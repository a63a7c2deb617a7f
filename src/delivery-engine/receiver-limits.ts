import type { DeliveryOutcome } from "./sender.js";

/**
 * How many deliveries each webhook may have in flight in this worker, learnt from its receiver, and
 * a shared budget that receivers which do not answer cannot exceed. Slow or dead receivers must not
 * take the slots healthy ones need (a webhook whose receiver hangs holds a slot for the whole
 * DELIVERY_TIMEOUT_MS):
 *
 * - A webhook's limit starts small (`initial`), doubles with each success up to `max`, and
 *   halves (to no less than 1) with each timeout or connection failure. HTTP errors do not change it:
 *   that receiver answered, promptly.
 * - A webhook whose receiver timed out or refused the connection, or has kept a send open longer
 *   than `slowAfterMs` (a hanging receiver is caught in seconds, not at its timeout), is "restricted"
 *   until its next success: restricted webhooks together have at most `restrictedBudget` deliveries in
 *   flight. So whatever a set of receivers does, the other webhooks keep the rest of the slots. A
 *   webhook not seen yet is not restricted (it needs a slot to show it is healthy), only small.
 */
export interface ClaimPlan {
  /** Per known webhook: how many more it may have in flight, and whether it is restricted. */
  allowances: Map<number, { allowance: number; restricted: boolean }>;
  /** How many a webhook not seen yet may get. */
  defaultAllowance: number;
  /** How many more deliveries restricted webhooks may get, together. */
  restrictedBudget: number;
}

interface ReceiverState {
  limit: number;
  inFlight: number;
  restricted: boolean;
  lastUsedMs: number;
  /** When each of its sends in flight started, by delivery id. */
  sendsStartedMs: Map<number, number>;
}

const forgetAfterMs = 10 * 60_000;

export class ReceiverLimits {
  private readonly states = new Map<number, ReceiverState>();
  private restrictedInFlight = 0;
  private lastSweepMs = 0;

  constructor(
    private readonly options: { initial: number; max: number; restrictedBudget: number; slowAfterMs: number },
  ) {}

  private state(webhookId: number): ReceiverState {
    let state = this.states.get(webhookId);
    if (!state) {
      state = {
        limit: Math.min(this.options.initial, this.options.max),
        inFlight: 0,
        restricted: false,
        lastUsedMs: 0,
        sendsStartedMs: new Map(),
      };
      this.states.set(webhookId, state);
    }
    return state;
  }

  started(webhookId: number, deliveryId: number): void {
    const state = this.state(webhookId);
    state.inFlight += 1;
    state.lastUsedMs = Date.now();
    state.sendsStartedMs.set(deliveryId, state.lastUsedMs);
    if (state.restricted) this.restrictedInFlight += 1;
  }

  finished(webhookId: number, deliveryId: number, outcome: DeliveryOutcome | undefined): void {
    const state = this.state(webhookId);
    state.inFlight -= 1;
    state.sendsStartedMs.delete(deliveryId);
    if (state.restricted) this.restrictedInFlight -= 1;
    if (outcome?.success) {
      // Doubling (TCP's slow start) reaches the maximum within a few answers: while a limit is below
      // the claim size every claim takes the capped statement, which costs throughput.
      state.limit = Math.min(this.options.max, state.limit * 2);
      this.setRestricted(state, false);
    } else if (outcome && (outcome.failure === "timeout" || outcome.failure === "connection")) {
      state.limit = Math.max(1, Math.floor(state.limit / 2));
      this.setRestricted(state, true);
    }
  }

  /** In flight now, per webhook (for the claim and for tests). */
  inFlight(webhookId: number): number {
    return this.states.get(webhookId)?.inFlight ?? 0;
  }

  /** Whether rows may be waiting because a limit or the budget held them back (so ask again later). */
  mayHoldBack(): boolean {
    if (this.restrictedInFlight >= this.options.restrictedBudget) return true;
    for (const state of this.states.values())
      if (state.inFlight > 0 && state.inFlight >= state.limit) return true;
    return false;
  }

  limitOf(webhookId: number): number {
    return this.state(webhookId).limit;
  }

  plan(): ClaimPlan {
    this.sweep();
    this.restrictSlowReceivers();
    const allowances = new Map<number, { allowance: number; restricted: boolean }>();
    for (const [id, state] of this.states)
      allowances.set(id, {
        allowance: Math.max(0, state.limit - state.inFlight),
        restricted: state.restricted,
      });
    return {
      allowances,
      defaultAllowance: Math.min(this.options.initial, this.options.max),
      restrictedBudget: Math.max(0, this.options.restrictedBudget - this.restrictedInFlight),
    };
  }

  /** A receiver that keeps a send open longer than slowAfterMs is restricted now, not at its timeout. */
  private restrictSlowReceivers(): void {
    const openedBefore = Date.now() - this.options.slowAfterMs;
    for (const state of this.states.values()) {
      if (state.restricted) continue;
      for (const startedMs of state.sendsStartedMs.values()) {
        if (startedMs < openedBefore) {
          this.setRestricted(state, true);
          break;
        }
      }
    }
  }

  private setRestricted(state: ReceiverState, restricted: boolean): void {
    if (state.restricted === restricted) return;
    // Sends of this webhook still in flight move to the other side of the budget with it.
    this.restrictedInFlight += restricted ? state.inFlight : -state.inFlight;
    state.restricted = restricted;
  }

  /** Forgets webhooks idle for a while, so the map stays as small as the set of active webhooks. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweepMs < forgetAfterMs) return;
    this.lastSweepMs = now;
    for (const [id, state] of this.states)
      if (state.inFlight === 0 && now - state.lastUsedMs > forgetAfterMs) this.states.delete(id);
  }
}
