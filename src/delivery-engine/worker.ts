import { abortable } from "../abortable.js";
import { isTransientDatabaseError } from "../db/sqlstate.js";
import { type Logger, logRetry } from "../logger.js";
import { metrics } from "../metrics.js";
import type { HandOver } from "./emit.js";
import { PaceWake, tokenStale } from "./pace.js";
import type { ClaimedDelivery, RecordedOutcome } from "./queue.js";
import { ReceiverLimits } from "./receiver-limits.js";
import { type RowState, SendSlots } from "./send-slots.js";
import type { DeliveryOutcome, OutboundDelivery } from "./sender.js";
import { longestSendMs } from "./timing.js";
import type { WorkerQueue } from "./worker-queue.js";
import { WorkerSends } from "./worker-sends.js";

export interface WorkerOptions {
  /** The database as the worker sees it: its statements and its LISTEN (worker-queue.ts). */
  queue: WorkerQueue;
  workerId: string;
  concurrency: number;
  perWebhookConcurrency: number;
  leaseMs: number;
  /** The delivery timeout: a send open for a quarter of it (at least 5 s) marks its receiver slow. */
  timeoutMs: number;
  pollIntervalMs: number;
  /** The waits before automatic retries 1–5 (config DELIVERY_RETRY_DELAYS_MS), jittered ±20 %. */
  retryDelaysMs: number[];
  /** The longest pause a receiver's Retry-After can ask for (DELIVERY_RETRY_AFTER_MAX_SECONDS), in ms. */
  retryAfterMaxMs: number;
  send: (delivery: OutboundDelivery) => Promise<DeliveryOutcome>;
  logger: Logger;
}

/**
 * The worker's life. `new`: constructed; a turn may record (and claim) when woken, but nothing runs by
 * itself and nothing is handed over. `running`: listening, polling, claiming, sending. `stopping`: it
 * claims no more and waits for its sends; `stopped`: their outcomes recorded, the rest released.
 */
export type WorkerLifecycle = "new" | "running" | "stopping" | "stopped";

/**
 * The one loop that talks to the database. `idle`: no statement running or due. `gathering`: a turn
 * is due but waits briefly so that more outcomes share it (gatherFor). `turning`: statements are
 * running, one at a time; a wake meanwhile (`again`) runs one more turn after them, never two at once.
 */
export type TurnState = "idle" | "gathering" | "turning";

type Turn =
  | { state: "idle" }
  | { state: "gathering"; timer: NodeJS.Timeout }
  | { state: "turning"; done: Promise<void>; again: boolean };

const outcomeBatchSize = 500;
/** Due retries queued per poll tick at most; more wait for the next tick (or another replica). */
const dueRetriesBatchSize = 1_000;
/** Deliveries a webhook may have in flight before its receiver has answered once (receiver-limits.ts). */
const initialReceiverLimit = 2;
/** Outcomes kept in memory while the database is out of reach (a few MB at most). */
const maxKeptOutcomes = 10_000;
const gatherMs = 1;
/**
 * How long outcomes wait to be recorded together when there is nothing to claim (moderate rates): the
 * next claim, woken by an event's NOTIFY, takes them along, or the wait ends and one transaction records
 * them all. At 200 events/s a send finishing recorded at once cost a transaction (and a commit) of its
 * own per event (bench/delivery.ts); handed-over events wake no claim, so their outcomes wait the whole
 * time: 50 ms left 1.1 transactions per event at 200 events/s, 10 ms 1.4. Arrivals are not delayed; a
 * crash meanwhile means a re-send.
 */
const groupRecordsMs = 50;
const slowCheckIntervalMs = 100;

/**
 * Sends queued deliveries. One loop talks to the database, one statement per turn: it records the
 * outcomes that finished since the last turn and claims deliveries for the slots now free. Under load
 * each turn carries everything that finished while the previous one ran (group commit); when idle, a
 * NOTIFY from a committed event wakes it at once, with a slow poll as backstop (missed notifications,
 * expired leases of dead workers).
 */
export class DeliveryWorker {
  /** Claimed rows waiting (claimed ahead, or held by their webhook's limit) and sends holding slots. */
  private readonly slots: SendSlots;
  /** startReady is running: a slot freed meanwhile (a send that ended at once) makes it go round again. */
  private startingReady: { again: boolean } | undefined;
  /** What each send becomes: an outcome to record, or a pause its receiver asked for. */
  private readonly sends: WorkerSends;
  /** Rows claimed beyond the free slots, so a finished send is replaced at once, not a turn later. */
  private readonly claimAhead: number;
  /** How long a claimed row may wait to be sent: past it, it goes back to the queue unsent. */
  private readonly maxWaitMs: number;
  private releasing: Promise<void> | undefined;
  private readonly limits: ReceiverLimits;
  /** Claims again when a paced webhook's next token or a receiver's pause is due (pace.ts). */
  private readonly paceWake = new PaceWake(() => this.wake());
  private pendingOutcomes: RecordedOutcome[] = [];
  private lifecycle: WorkerLifecycle = "new";
  private turn: Turn = { state: "idle" };
  private queueingRetries: Promise<void> | undefined;
  /** False once a claim came back short: no need to ask again until woken. */
  private queueMayHaveWork = true;
  /** Turns failed in a row: the backoff before the next (failed). */
  private failures = 0;
  private readonly listener: { start(): Promise<void>; stop(): Promise<void> };
  /** While running: the backstop poll, and the check for receivers that became slow. */
  private pollTimer: NodeJS.Timeout | undefined;
  private slowCheckTimer: NodeJS.Timeout | undefined;
  /** After a failed turn: the next one, later and later while failures go on. */
  private backoffTimer: NodeJS.Timeout | undefined;
  /** Fewer free slots and finished sends than this make a turn worth delaying (gatherFor). */
  private readonly gatherBelow: number;

  constructor(private readonly options: WorkerOptions) {
    this.gatherBelow = Math.ceil(options.concurrency / 8);
    this.listener = options.queue.listen(() => this.wake());
    const slowAfterMs = Math.min(options.timeoutMs, Math.max(5_000, options.timeoutMs / 4));
    // A row's lease runs from its claim: the wait before its send plus the send must fit in it.
    this.maxWaitMs = Math.min(slowAfterMs, options.leaseMs - longestSendMs(options.timeoutMs));
    this.claimAhead = this.maxWaitMs > 0 ? Math.ceil(options.concurrency / 2) : 0;
    this.limits = new ReceiverLimits({
      initial: initialReceiverLimit,
      max: options.perWebhookConcurrency,
      restrictedBudget: Math.max(1, Math.floor(options.concurrency / 4)),
      slowAfterMs,
      ahead: this.claimAhead,
    });
    this.sends = new WorkerSends({
      ...options,
      paceWake: this.paceWake,
      record: (outcome) => this.pendingOutcomes.push(outcome),
      whilePausing: (pausing) => {
        this.releasing = Promise.all([this.releasing, pausing]).then(() => undefined);
      },
      finish: (deliveryId, outcome) => this.slots.finish(deliveryId, outcome),
    });
    this.slots = new SendSlots(this.limits, {
      freed: () => {
        this.startReady();
        this.kick();
      },
      unknownSend: (deliveryId) =>
        this.options.logger.error({ deliveryId }, "a send finished that held no slot (a bug in the worker)"),
    });
  }

  /** Where it is in its life and in its turn loop (for tests and diagnostics). */
  get state(): { lifecycle: WorkerLifecycle; turn: TurnState } {
    return { lifecycle: this.lifecycle, turn: this.turn.state };
  }

  private get stopping(): boolean {
    return this.lifecycle === "stopping" || this.lifecycle === "stopped";
  }

  async start(): Promise<void> {
    this.lifecycle = "running";
    await this.listener.start();
    this.pollTimer = setInterval(() => {
      metrics.deliverySendsStuck.set(this.stuckSends());
      this.queueDueRetries();
      this.startReady();
      this.wake();
    }, this.options.pollIntervalMs);
    // A receiver found slow gives back the slots its open sends held beyond the restricted budget
    // (receiver-limits.ts): found within a tenth of a second of the threshold, not at the next claim.
    this.slowCheckTimer = setInterval(() => {
      if (this.limits.restrictSlowReceivers()) {
        this.startReady();
        this.wake();
      }
    }, slowCheckIntervalMs);
    this.queueDueRetries();
    this.wake();
  }

  /**
   * Queues the automatic retries that are due (queue.ts), apart from the turn loop so its statement
   * stays as it is. The NOTIFY it sends wakes this worker and the others; a failure waits for the next
   * tick (the retries stay where they are, in the database).
   */
  private queueDueRetries(): void {
    if (this.queueingRetries || this.stopping) return;
    this.queueingRetries = this.options.queue
      .queueDueRetries(dueRetriesBatchSize)
      .then((queued) => {
        if (queued > 0) this.wake();
      })
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error }, "queueing due retries failed; the next poll tries again");
      })
      .finally(() => {
        this.queueingRetries = undefined;
      });
  }

  /**
   * What an emit in this process may hand straight to this worker (hand-over.ts): its free slots and
   * what each webhook may be given now, a restricted one nothing. None before start, once stopping, and
   * when rows may not wait for a slot (a lease too short to claim ahead).
   */
  handOverLease(): HandOver | undefined {
    const limit = this.options.concurrency - this.slots.inUse() - this.slots.waiting.length;
    if (this.lifecycle !== "running" || this.claimAhead === 0 || limit <= 0) return undefined;
    const plan = this.limits.plan();
    const allowances = new Map<number, number>();
    for (const [id, { allowance, restricted }] of plan.allowances)
      allowances.set(id, restricted ? 0 : allowance);
    const { workerId, leaseMs } = this.options;
    return { workerId, leaseMs, limit, allowances, defaultAllowance: plan.defaultAllowance };
  }

  /**
   * Takes rows an emit handed over, once its transaction committed: leased to this worker, they are
   * sent as claimed rows are. Stopping meanwhile, it gives them back to the queue.
   */
  takeHandedOver(deliveries: ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    if (this.stopping) {
      this.release(deliveries.map((delivery) => delivery.id));
      return;
    }
    const claimedAtMs = Date.now();
    for (const delivery of deliveries) this.slots.claimed(delivery, claimedAtMs);
    this.startReady();
  }

  /** Something may be due: claim now (or right after the turn in progress). */
  wake(): void {
    this.queueMayHaveWork = true;
    this.kick();
  }

  /** Stop claiming, let in-flight sends finish within timeoutMs, record them, release the rest. */
  async stop(timeoutMs: number): Promise<void> {
    this.lifecycle = "stopping";
    clearInterval(this.pollTimer);
    clearInterval(this.slowCheckTimer);
    clearTimeout(this.backoffTimer);
    if (this.turn.state === "gathering") clearTimeout(this.turn.timer);
    this.paceWake.stop();
    await this.listener.stop();
    await this.queueingRetries;
    await this.releasing;
    await abortable(this.slots.allSent(), AbortSignal.timeout(timeoutMs)).catch(() => {});
    // Record what finished; a stopped worker's turns claim nothing.
    this.kick();
    if (this.turn.state === "turning") await this.turn.done;
    // The rows still waiting are released with every other unfinished claim of this worker.
    this.slots.giveBackAll();
    const released = await this.options.queue.releaseClaims().catch(() => 0);
    if (released > 0)
      this.options.logger.info({ released }, "released unfinished deliveries back to the queue");
    this.lifecycle = "stopped";
  }

  private kick(): void {
    if (this.turn.state === "turning") this.turn.again = true;
    // While a gathering wait runs, only an end to the reason for it starts the turn early: more kicks
    // (sends finishing, NOTIFYs) must not stretch the wait.
    else if (this.turn.state === "idle" || this.gatherFor() === undefined) this.startTurn(false);
  }

  /**
   * Starts the turn loop after the I/O callbacks of this loop iteration, so that sends finishing
   * together share a turn. A turn costs about the same for 1 row as for 50: while most slots are busy
   * and only a few sends have finished, the loop first waits up to gatherMs for more (never when little
   * is in flight, so an idle worker answers a NOTIFY at once; once only, so a slot freed next to hanging
   * sends is refilled within gatherMs). With nothing to claim, outcomes wait up to groupRecordsMs for
   * the next claim or for each other; a NOTIFY ends that wait at once.
   */
  private startTurn(gathered: boolean): void {
    if (this.turn.state === "turning") {
      this.turn.again = true;
      return;
    }
    if (this.turn.state === "gathering") clearTimeout(this.turn.timer);
    let gatherFor: number | undefined;
    const turning: Turn & { state: "turning" } = { state: "turning", done: Promise.resolve(), again: false };
    turning.done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        gatherFor = await this.turnLoop(turning, gathered);
      })
      .finally(() => {
        this.turn =
          gatherFor === undefined
            ? { state: "idle" }
            : { state: "gathering", timer: setTimeout(() => this.startTurn(true), gatherFor) };
        // A send that finished between the loop's last check and now.
        if (turning.again) this.kick();
      });
    this.turn = turning;
  }

  /**
   * Rows a claim may take now: the free slots, less the rows claimed and not sent yet, plus claimAhead
   * while sends are finishing. A worker whose every slot hangs claims nothing ahead: the rows would only
   * wait, and another replica can send them.
   */
  private claimable(sendsFinishing: boolean): number {
    const ahead = sendsFinishing ? this.claimAhead : 0;
    return this.options.concurrency + ahead - this.slots.inUse() - this.slots.waiting.length;
  }

  /**
   * Sends open longer than twice the longest a send can take: none, unless a slot was lost (a send
   * whose end did not give it back). Shown by /readyz and webhook_operator_delivery_sends_stuck.
   */
  stuckSends(): number {
    return this.slots.stuck(Date.now() - 2 * longestSendMs(this.options.timeoutMs));
  }

  /** Where a claimed row is in this worker (send-slots.ts); undefined: not held (for tests and diagnostics). */
  rowState(deliveryId: number): RowState | undefined {
    return this.slots.stateOf(deliveryId);
  }

  /** How the worker's slots are used now (for tests and diagnostics). */
  get slotUsage(): { sending: number; waiting: number; inUse: number } {
    return { sending: this.slots.sending, waiting: this.slots.waiting.length, inUse: this.slots.inUse() };
  }

  /** Sends of the webhook in flight on this replica: this worker's and synchronous ones. */
  sendsInFlightOf(webhookId: number): number {
    return this.limits.inFlight(webhookId);
  }

  /**
   * A replay or test event of the webhook starts: it takes a slot and counts against the webhook's
   * limit, and its outcome teaches the limit as a claimed send's does. `sendId` is negative, apart from
   * delivery ids.
   */
  synchronousStarted(webhookId: number, sendId: number): void {
    this.slots.synchronousStarted(webhookId, sendId);
  }

  /** It ended (outcome undefined: it was not sent); its slot goes to the rows waiting, or a claim. */
  synchronousFinished(webhookId: number, sendId: number, outcome: DeliveryOutcome | undefined): void {
    this.slots.synchronousFinished(webhookId, sendId, outcome);
    // A worker not started (DELIVERY_WORKERS=false) or stopping claims nothing.
    if (this.lifecycle !== "running") return;
    this.startReady();
    this.kick();
  }

  /**
   * How long a turn is worth delaying, if at all: briefly while most slots are busy and few sends have
   * finished; up to groupRecordsMs while there are only outcomes to record (nothing may be queued).
   */
  private gatherFor(): number | undefined {
    const pending = this.pendingOutcomes.length;
    if (this.stopping || pending >= this.gatherBelow) return undefined;
    if (this.claimable(pending > 0) < this.gatherBelow) return gatherMs;
    return pending > 0 && !this.queueMayHaveWork ? groupRecordsMs : undefined;
  }

  /** Runs turns while there is work; returns how long to gather before the next, if it should wait. */
  private async turnLoop(turning: { again: boolean }, gathered: boolean): Promise<number | undefined> {
    do {
      turning.again = false;
      const gatherFor = gathered ? undefined : this.gatherFor();
      if (gatherFor !== undefined) return gatherFor;
      gathered = false;
      const outcomes = this.pendingOutcomes.splice(0, outcomeBatchSize);
      const free = this.claimable(outcomes.length > 0);
      const claimLimit = !this.stopping && this.queueMayHaveWork && free > 0 ? free : 0;
      if (outcomes.length === 0 && claimLimit === 0) return undefined;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.options.queue.recordAndClaim(outcomes, {
          limit: claimLimit,
          leaseMs: this.options.leaseMs,
          plan: this.limits.plan(),
        });
        this.failures = 0;
      } catch (error) {
        this.failed(error, outcomes);
        return undefined;
      }
      const claimedAtMs = Date.now();
      for (const delivery of claimed) this.slots.claimed(delivery, claimedAtMs);
      this.paceWake.claimed(claimed);
      this.startReady();
      // A rollout's next event, held back by the one just recorded (sql/claim.sql), is claimable now:
      // the claim that ran beside the record still saw that one unfinished.
      if (outcomes.some((o) => o.holdsLaterEvents)) this.wake();
      if (claimLimit > 0) {
        // A short claim means the queue is drained, except for rows held back by a webhook's limit or
        // the restricted budget: those are claimed when one of the sends holding them finishes.
        // A webhook whose fair share of this claim left due rows behind (claim.ts) is served next turn.
        if (claimed.length === claimLimit || claimed[0]?.more_due) turning.again = true;
        else this.queueMayHaveWork = turning.again || this.limits.mayHoldBack();
      }
      if (this.pendingOutcomes.length > 0) turning.again = true;
    } while (turning.again);
    return undefined;
  }

  /**
   * A turn failed. While the database cannot be reached the outcomes of finished sends are kept in
   * memory (up to maxKeptOutcomes) and written when it answers again, with backoff: so a short outage
   * re-sends nothing. Only past that bound, or for an error the database itself reported (a bug, not
   * an outage), are outcomes let go; their rows are sent again once their lease expires.
   */
  private failed(error: unknown, outcomes: RecordedOutcome[]): void {
    this.failures += 1;
    const transient = isTransientDatabaseError(error);
    if (transient) this.pendingOutcomes.unshift(...outcomes);
    const dropped = transient ? Math.max(0, this.pendingOutcomes.length - maxKeptOutcomes) : outcomes.length;
    if (dropped > 0) this.pendingOutcomes.splice(0, transient ? dropped : 0);
    const retryInMs = Math.min(30_000, 100 * 2 ** this.failures);
    const fields = { kept: this.pendingOutcomes.length, dropped, retryInMs };
    if (dropped > 0)
      this.options.logger.error({ err: error, ...fields }, "recording and claiming deliveries failed");
    else
      logRetry(this.options.logger, error, fields, "recording and claiming deliveries failed; outcomes kept");
    if (transient || !this.stopping) {
      clearTimeout(this.backoffTimer);
      this.backoffTimer = setTimeout(() => this.kick(), retryInMs);
    }
  }

  /**
   * Sends claimed rows, oldest claim first, while slots are free and their webhook's limit allows. A
   * row that waited past maxWaitMs (every slot or its webhook's sends held by slow receivers) goes back
   * to the queue unsent, for another replica or a later claim, before its lease could run out mid-send.
   */
  private startReady(): void {
    if (this.startingReady) {
      this.startingReady.again = true;
      return;
    }
    const starting = { again: true };
    this.startingReady = starting;
    try {
      while (starting.again) {
        starting.again = false;
        this.startWaiting();
      }
    } finally {
      this.startingReady = undefined;
    }
  }

  private startWaiting(): void {
    const expireBefore = Date.now() - this.maxWaitMs;
    const expired: number[] = [];
    while ((this.slots.waiting[0]?.claimedAtMs ?? expireBefore) < expireBefore)
      expired.push(this.slots.giveBack(0).id);
    if (expired.length > 0) this.release(expired);
    const unpaced: number[] = [];
    const { waiting } = this.slots;
    for (let i = 0; i < waiting.length && this.slots.inUse() < this.options.concurrency && !this.stopping; ) {
      const { delivery, claimedAtMs } = waiting[i] as { delivery: ClaimedDelivery; claimedAtMs: number };
      // Claimed before its receiver asked for a pause, or held so long that its token is stale (pace.ts):
      // back to the queue, once the pause is stored.
      if (this.paceWake.isPaused(delivery.webhook_id) || tokenStale(delivery, claimedAtMs)) {
        unpaced.push(this.slots.giveBack(i).id);
      } else if (this.limits.canStart(delivery.webhook_id)) {
        metrics.deliveryLag.observe(Math.max(0, Date.now() - delivery.queued_at_ms) / 1000);
        this.slots.start(i, (row) => this.sends.run(row));
      } else i += 1;
    }
    if (unpaced.length > 0) void Promise.resolve(this.releasing).then(() => this.release(unpaced));
  }

  /** Gives rows back to the queue; if that fails, their leases run out and they are claimed again. */
  private release(ids: number[]): void {
    const giving = this.options.queue.releaseClaimsOf(ids).catch((error: unknown) => {
      this.options.logger.warn(
        { err: error, deliveries: ids.length },
        "giving back unsent deliveries failed; they are sent once their lease ends",
      );
    });
    this.releasing = Promise.all([this.releasing, giving]).then(() => undefined);
    this.wake();
  }
}
