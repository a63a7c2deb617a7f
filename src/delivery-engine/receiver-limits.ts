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
 * - A webhook whose receiver timed out or refused the connection, or has kept a send open too long
 *   (a hanging receiver is caught in under a second or in seconds, not at its timeout), is
 *   "restricted" until its next success: restricted webhooks together have at most `restrictedBudget`
 *   deliveries claimed. Too long is `answerFactor` times the slowest of its recent answers, at least
 *   `unansweredSlowAfterMs` and at most `slowAfterMs`: a receiver that answers in milliseconds and then
 *   hangs is caught as soon as one that never answered, and a slow one that answers has its time. A
 *   webhook whose receiver has not answered yet in this worker (new, or any webhook after a restart)
 *   is not restricted (it needs a slot to show it is healthy), only small, and caught after
 *   `unansweredSlowAfterMs`.
 * - Sends a webhook had open when it became restricted, beyond the budget, are written off: they stop
 *   counting against the worker's slots (overflowSends) until they end, by the delivery timeout at the
 *   latest, and meanwhile the other webhooks keep all but the budget. A send written off stays so when
 *   its webhook answers another send and is no longer restricted: otherwise a receiver that hangs most
 *   requests and answers one would take the slots back from everyone. So whatever a set of receivers
 *   does, the others keep at least the rest of the slots once those receivers are recognized as slow.
 * - The worker claims ahead (worker.ts): a webhook whose limit has grown past `initial` (its receiver
 *   answers) and is not restricted may hold up to `ahead` more claimed rows than its limit, at most
 *   as many again, waiting to be sent. Its sends in flight stay within its limit (canStart).
 */
export interface ClaimPlan {
  /** Per known webhook: how many more rows it may be given, and whether it is restricted. */
  allowances: Map<number, { allowance: number; restricted: boolean }>;
  /** How many a webhook not seen yet may get. */
  defaultAllowance: number;
  /** How many more rows restricted webhooks may be given, together. */
  restrictedBudget: number;
  /**
   * Rows each webhook holds now (claimed, not finished), where any: the claim serves the webhook holding
   * the fewest first (sql/claim.sql). Absent: none held.
   */
  held?: Map<number, number>;
}

interface ReceiverState {
  limit: number;
  /** Whether its receiver has answered (a status, any) since this worker knows it. */
  answered: boolean;
  /** The slowest of its recent answers: each answer's duration, or this one fading by a tenth an answer. */
  slowestAnswerMs: number;
  /** Rows claimed for it and not finished or given back: waiting to be sent, or in flight. */
  held: number;
  inFlight: number;
  restricted: boolean;
  lastUsedMs: number;
  /** Its sends in flight, by delivery id: when each started, and whether it was written off. */
  sends: Map<number, OpenSend>;
  /** How many of them are written off. */
  writtenOff: number;
}

interface OpenSend {
  startedMs: number;
  writtenOff: boolean;
}

const forgetAfterMs = 10 * 60_000;
/** A send open this many times longer than the receiver's slowest recent answer is slow. */
const answerFactor = 4;
/**
 * A restricted webhook is remembered longer: forgotten, it would be new again and get its starting
 * limit (every hour, not every ten minutes, a webhook whose backlog waits behind a hanging receiver).
 */
const forgetRestrictedAfterMs = 60 * 60_000;

export class ReceiverLimits {
  private readonly states = new Map<number, ReceiverState>();
  /** Rows held for restricted webhooks, together. */
  private restrictedHeld = 0;
  /** Sends of restricted webhooks in flight, together. */
  private restrictedInFlight = 0;
  /** Of those, the sends written off (the budget's overflow), and written-off sends of any webhook. */
  private restrictedWrittenOff = 0;
  private writtenOff = 0;
  private lastSweepMs = 0;

  constructor(
    private readonly options: {
      initial: number;
      max: number;
      restrictedBudget: number;
      slowAfterMs: number;
      /** For a webhook whose receiver has not answered yet: 500 ms unless slowAfterMs is shorter. */
      unansweredSlowAfterMs?: number;
      /** Rows a webhook whose receiver answers may hold beyond its limit (0: none). */
      ahead?: number;
    },
  ) {}

  private state(webhookId: number): ReceiverState {
    let state = this.states.get(webhookId);
    if (!state) {
      state = {
        limit: Math.min(this.options.initial, this.options.max),
        answered: false,
        slowestAnswerMs: 0,
        held: 0,
        inFlight: 0,
        restricted: false,
        lastUsedMs: 0,
        sends: new Map(),
        writtenOff: 0,
      };
      this.states.set(webhookId, state);
    }
    return state;
  }

  /** A row was claimed for the webhook: it holds it until the send finishes or the row is given back. */
  claimed(webhookId: number): void {
    const state = this.state(webhookId);
    state.held += 1;
    state.lastUsedMs = Date.now();
    if (state.restricted) this.restrictedHeld += 1;
  }

  /** Whether a row held for the webhook may be sent now: its sends in flight are under its limit. */
  canStart(webhookId: number): boolean {
    const state = this.states.get(webhookId);
    return state === undefined || state.inFlight < state.limit;
  }

  /** A held row's send starts. */
  started(webhookId: number, deliveryId: number): void {
    const state = this.state(webhookId);
    state.inFlight += 1;
    state.lastUsedMs = Date.now();
    state.sends.set(deliveryId, { startedMs: state.lastUsedMs, writtenOff: false });
    if (state.restricted) {
      this.restrictedInFlight += 1;
      this.writeOffBeyondBudget();
    }
  }

  /** A held row went back to the queue unsent. */
  released(webhookId: number): void {
    const state = this.state(webhookId);
    state.held -= 1;
    if (state.restricted) this.restrictedHeld -= 1;
  }

  finished(webhookId: number, deliveryId: number, outcome: DeliveryOutcome | undefined): void {
    const state = this.state(webhookId);
    state.held -= 1;
    state.inFlight -= 1;
    const send = state.sends.get(deliveryId);
    state.sends.delete(deliveryId);
    if (send?.writtenOff) {
      state.writtenOff -= 1;
      this.writtenOff -= 1;
      if (state.restricted) this.restrictedWrittenOff -= 1;
    }
    if (state.restricted) {
      this.restrictedHeld -= 1;
      this.restrictedInFlight -= 1;
    }
    if (outcome && outcome.statusCode !== 0) {
      state.answered = true;
      state.slowestAnswerMs = Math.max(outcome.durationMs, state.slowestAnswerMs * 0.9);
    }
    if (outcome?.success) {
      // Doubling (TCP's slow start) reaches the maximum within a few answers: a limit below the claim
      // size keeps that webhook's share of each claim small.
      state.limit = Math.min(this.options.max, state.limit * 2);
      this.setRestricted(state, false);
    } else if (outcome && (outcome.failure === "timeout" || outcome.failure === "connection")) {
      state.limit = Math.max(1, Math.floor(state.limit / 2));
      this.setRestricted(state, true);
    }
  }

  /**
   * Sends written off: of restricted webhooks beyond the restricted budget, open since before their
   * webhook was found slow, and still open. They do not count against the worker's slots (see the
   * class comment).
   */
  overflowSends(): number {
    return this.writtenOff;
  }

  /** In flight now, per webhook (for the claim and for tests). */
  inFlight(webhookId: number): number {
    return this.states.get(webhookId)?.inFlight ?? 0;
  }

  /** Whether rows may be waiting because a limit or the budget held them back (so ask again later). */
  mayHoldBack(): boolean {
    if (this.restrictedHeld >= this.options.restrictedBudget) return true;
    for (const state of this.states.values()) if (state.held > 0 && this.allowance(state) === 0) return true;
    return false;
  }

  /** How many more rows the webhook may be given: its limit, plus some ahead when its receiver answers. */
  private allowance(state: ReceiverState): number {
    const ahead =
      state.restricted || state.limit <= this.options.initial
        ? 0
        : Math.min(this.options.ahead ?? 0, state.limit);
    return Math.max(0, state.limit + ahead - state.held);
  }

  limitOf(webhookId: number): number {
    return this.state(webhookId).limit;
  }

  plan(): ClaimPlan {
    this.sweep();
    this.restrictSlowReceivers();
    const allowances = new Map<number, { allowance: number; restricted: boolean }>();
    const held = new Map<number, number>();
    for (const [id, state] of this.states) {
      allowances.set(id, { allowance: this.allowance(state), restricted: state.restricted });
      if (state.held > 0) held.set(id, state.held);
    }
    return {
      allowances,
      held,
      defaultAllowance: Math.min(this.options.initial, this.options.max),
      restrictedBudget: Math.max(0, this.options.restrictedBudget - this.restrictedHeld),
    };
  }

  /**
   * A receiver that keeps a send open longer than its bound (answerFactor times its slowest recent
   * answer, within unansweredSlowAfterMs and slowAfterMs; unansweredSlowAfterMs before its first
   * answer) is restricted now, not at its timeout. True when one was.
   */
  restrictSlowReceivers(): boolean {
    let changed = false;
    const now = Date.now();
    const { slowAfterMs } = this.options;
    const unansweredSlowAfterMs = Math.min(slowAfterMs, this.options.unansweredSlowAfterMs ?? 500);
    for (const state of this.states.values()) {
      if (state.restricted) continue;
      const boundMs = state.answered
        ? Math.min(slowAfterMs, Math.max(unansweredSlowAfterMs, answerFactor * state.slowestAnswerMs))
        : unansweredSlowAfterMs;
      const openedBefore = now - boundMs;
      for (const { startedMs } of state.sends.values()) {
        if (startedMs < openedBefore) {
          this.setRestricted(state, true);
          changed = true;
          break;
        }
      }
    }
    return changed;
  }

  private setRestricted(state: ReceiverState, restricted: boolean): void {
    if (state.restricted === restricted) return;
    // Rows this webhook holds, and its sends, move to the other side of the budget with it.
    this.restrictedHeld += restricted ? state.held : -state.held;
    this.restrictedInFlight += restricted ? state.inFlight : -state.inFlight;
    this.restrictedWrittenOff += restricted ? state.writtenOff : -state.writtenOff;
    state.restricted = restricted;
    if (restricted) this.writeOffBeyondBudget();
  }

  /** Writes off restricted webhooks' sends, oldest first, until those still counted fit the budget. */
  private writeOffBeyondBudget(): void {
    let beyond = this.restrictedInFlight - this.restrictedWrittenOff - this.options.restrictedBudget;
    while (beyond > 0) {
      let oldest: { state: ReceiverState; send: OpenSend } | undefined;
      for (const state of this.states.values()) {
        if (!state.restricted) continue;
        for (const send of state.sends.values())
          if (!send.writtenOff && (!oldest || send.startedMs < oldest.send.startedMs))
            oldest = { state, send };
      }
      if (!oldest) return;
      oldest.send.writtenOff = true;
      oldest.state.writtenOff += 1;
      this.restrictedWrittenOff += 1;
      this.writtenOff += 1;
      beyond -= 1;
    }
  }

  /** Forgets webhooks idle for a while, so the map stays as small as the set of active webhooks. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweepMs < forgetAfterMs) return;
    this.lastSweepMs = now;
    for (const [id, state] of this.states) {
      const idleFor = now - state.lastUsedMs;
      if (state.held === 0 && idleFor > (state.restricted ? forgetRestrictedAfterMs : forgetAfterMs))
        this.states.delete(id);
    }
  }
}
