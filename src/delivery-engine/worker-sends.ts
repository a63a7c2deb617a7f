import type { Logger } from "../logger.js";
import type { PaceWake } from "./pace.js";
import type { ClaimedDelivery, RecordedOutcome } from "./queue.js";
import { PauseRuns, pauseReason, pauseUntil } from "./retry-after.js";
import type { DeliveryOutcome, OutboundDelivery } from "./sender.js";
import { notSentOutcome, observeOutcome, retryDelay } from "./worker-outcomes.js";
import type { WorkerQueue } from "./worker-queue.js";

/**
 * What the worker's sends become (worker.ts): each claimed row is sent in the slot it took
 * (send-slots.ts) and ends as an outcome to record, or as a pause its receiver asked for; whichever
 * it is, and whatever goes wrong, its slot is given back.
 */
export class WorkerSends {
  /** Each webhook's run of pauses its receiver asked for (retry-after.ts). */
  private readonly pauseRuns = new PauseRuns();

  constructor(
    private readonly options: {
      queue: Pick<WorkerQueue, "pauseWebhook">;
      send: (delivery: OutboundDelivery) => Promise<DeliveryOutcome>;
      retryDelaysMs: number[];
      retryAfterMaxMs: number;
      logger: Logger;
      paceWake: PaceWake;
      /** An outcome to record with the next turn. */
      record: (outcome: RecordedOutcome) => void;
      /** A pause being stored: the worker lets it finish before it gives rows of that webhook back. */
      whilePausing: (pausing: Promise<void>) => void;
      /** Gives the send's slot back (SendSlots.finish). */
      finish: (deliveryId: number, outcome: DeliveryOutcome | undefined) => void;
    },
  ) {}

  /** Sends the row (a disabled webhook's is recorded unsent, at once) and gives its slot back however it ends. */
  async run(delivery: ClaimedDelivery): Promise<void> {
    let outcome: DeliveryOutcome | undefined;
    try {
      if (!delivery.enabled) {
        const notSent = notSentOutcome(delivery);
        this.options.record({ id: delivery.id, outcome: notSent, deliveredAtMs: Date.now() });
        return;
      }
      outcome = await this.options.send({
        url: delivery.url,
        body: delivery.body,
        eventType: delivery.event_type,
        deliveryId: delivery.id,
        secret: delivery.secret,
        shape: delivery.shape,
      });
      this.answered(delivery, outcome);
    } catch (error) {
      // The sender turns every failure into an outcome: this is a bug. The row is neither recorded nor
      // given back, so it is sent again once its lease ends (never at once: a bug must not make a loop).
      this.options.logger.error(
        { err: error, deliveryId: delivery.id },
        "sending a delivery failed unexpectedly; it is sent again once its lease ends",
      );
    } finally {
      this.options.finish(delivery.id, outcome);
    }
  }

  /** The receiver answered, or the send failed: a pause it asked for, or an attempt to record. */
  private answered(delivery: ClaimedDelivery, outcome: DeliveryOutcome): void {
    const webhookId = delivery.webhook_id;
    const { paceWake } = this.options;
    const pausedUntil = pauseUntil(outcome, Date.now(), this.options.retryAfterMaxMs);
    if (pausedUntil === undefined) this.pauseRuns.ended(webhookId);
    else if (this.pauseRuns.grant(webhookId, paceWake.isPaused(webhookId))) {
      this.paused(delivery, outcome.statusCode, pausedUntil);
      return;
    }
    observeOutcome(delivery, outcome);
    // A 410 disables a webhook with auto-disable once recorded (webhooks/auto-disable.ts): none of its
    // rows claimed ahead is sent meanwhile.
    if (outcome.statusCode === 410 && delivery.counted_by_policy)
      paceWake.paused(webhookId, Date.now() + 1_000);
    this.options.record({
      id: delivery.id,
      outcome,
      deliveredAtMs: Date.now(),
      retryInMs: retryDelay(delivery, outcome, this.options.retryDelaysMs),
      countedByPolicy: delivery.counted_by_policy,
      holdsLaterEvents: delivery.rollout_id !== null,
    });
  }

  /**
   * The receiver asked for a pause (429/503 with Retry-After): its webhook is paused for every replica
   * and the delivery goes back to the queue, not recorded as a failed attempt (pace.ts). If that cannot
   * be written, the row's lease runs out and it is sent again then.
   */
  private paused(delivery: ClaimedDelivery, statusCode: number, untilMs: number): void {
    const pausing = this.options.queue
      .pauseWebhook({
        webhookId: delivery.webhook_id,
        deliveryId: delivery.id,
        untilMs,
        reason: pauseReason(statusCode, untilMs),
      })
      .catch((error: unknown) => {
        this.options.logger.warn(
          { err: error },
          "pausing a throttled webhook failed; its delivery is sent again once its lease ends",
        );
      });
    this.options.whilePausing(pausing);
    this.options.paceWake.paused(delivery.webhook_id, untilMs);
  }
}
