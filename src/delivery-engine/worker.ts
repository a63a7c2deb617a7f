import pg from "pg";
import type { Pool } from "../db/pool.js";
import { isTransientDatabaseError } from "../db/sqlstate.js";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import { deliveriesChannel } from "./emit.js";
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  type RecordedOutcome,
  recordOutcomes,
  releaseClaims,
} from "./outbox.js";
import type { DeliveryOutcome, OutboundDelivery } from "./sender.js";

export interface WorkerOptions {
  pool: Pool;
  /** For the LISTEN connection, which lives outside the pool. */
  databaseUrl: string;
  workerId: string;
  concurrency: number;
  perWebhookConcurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  send: (delivery: OutboundDelivery) => Promise<DeliveryOutcome>;
  logger: Logger;
}

const outcomeBatchSize = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records an attempt's outcome in the metrics. */
export function observeOutcome(
  delivery: { webhook_id: number; event_type: string },
  outcome: DeliveryOutcome,
): void {
  const result = outcome.success ? "success" : "failure";
  metrics.deliveries.inc({
    webhook_id: String(delivery.webhook_id),
    event_type: delivery.event_type,
    outcome: result,
    reason: outcome.failure ?? "none",
  });
  metrics.deliveryDuration.observe({ outcome: result }, outcome.durationMs);
}

/**
 * Sends queued deliveries. Claims rows in batches sized to its free slots, woken at once by
 * LISTEN/NOTIFY when events are recorded, with a slow poll as backstop (missed notifications, expired
 * leases of dead workers). Outcomes are written in batches by a single flusher: under load each write
 * carries every outcome that finished while the previous one was in flight (group commit).
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly inFlightPerWebhook = new Map<number, number>();
  private pendingOutcomes: RecordedOutcome[] = [];
  private flushing: Promise<void> | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /** False once a claim came back short: no need to ask again until woken. */
  private queueMayHaveWork = true;
  private stopped = false;
  private listener: pg.Client | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WorkerOptions) {}

  async start(): Promise<void> {
    await this.listen().catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "LISTEN failed; relying on polling until it reconnects");
      this.scheduleReconnect(1_000);
    });
    this.pollTimer = setInterval(() => this.wake(), this.options.pollIntervalMs);
    this.wake();
  }

  /** Something may be due: claim now (or right after the claim in progress). */
  wake(): void {
    this.queueMayHaveWork = true;
    this.kick();
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Stop claiming, let in-flight sends finish within timeoutMs, record them, release the rest. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    await this.listener?.end().catch(() => {});
    await this.claiming;
    const drained = Promise.all(this.inFlight.values());
    await Promise.race([drained, sleep(timeoutMs)]);
    await this.flush();
    const released = await releaseClaims(this.options.pool, this.options.workerId).catch(() => 0);
    if (released > 0)
      this.options.logger.info({ released }, "released unfinished deliveries back to the queue");
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on("notification", () => this.wake());
    client.on("error", (error) => {
      this.options.logger.warn({ err: error }, "LISTEN connection lost");
      this.scheduleReconnect(1_000);
    });
    await client.connect();
    await client.query(`LISTEN ${deliveriesChannel}`);
    this.listener = client;
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.stopped || this.reconnectTimer) return;
    this.listener?.end().catch(() => {});
    this.listener = undefined;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.listen().then(
        () => this.wake(),
        () => this.scheduleReconnect(Math.min(delayMs * 2, 30_000)),
      );
    }, delayMs);
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimLoop().finally(() => {
      this.claiming = undefined;
    });
  }

  private async claimLoop(): Promise<void> {
    do {
      this.claimAgain = false;
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || !this.queueMayHaveWork || this.stopped) return;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await claimDueDeliveries(this.options.pool, {
          workerId: this.options.workerId,
          limit: free,
          leaseMs: this.options.leaseMs,
          perWebhookLimit: this.options.perWebhookConcurrency,
          inFlight: this.inFlightPerWebhook,
        });
      } catch (error) {
        this.options.logger.error({ err: error }, "claiming deliveries failed; retrying on the next poll");
        return;
      }
      for (const delivery of claimed) this.startSend(delivery);
      // A short claim means the queue is drained, except for rows held back because their webhook is
      // at its cap: those are claimed when one of its sends finishes.
      if (claimed.length === free) this.claimAgain = true;
      else this.queueMayHaveWork = this.claimAgain || this.anyWebhookAtCap();
    } while (this.claimAgain);
  }

  private anyWebhookAtCap(): boolean {
    for (const count of this.inFlightPerWebhook.values()) {
      if (count >= this.options.perWebhookConcurrency) return true;
    }
    return false;
  }

  private startSend(delivery: ClaimedDelivery): void {
    const perWebhook = this.inFlightPerWebhook;
    perWebhook.set(delivery.webhook_id, (perWebhook.get(delivery.webhook_id) ?? 0) + 1);
    metrics.inFlight.inc();
    metrics.deliveryLag.observe(Math.max(0, Date.now() - delivery.event_created_at.getTime()));
    const sending = this.options
      .send({
        url: delivery.url,
        body: delivery.body,
        eventType: delivery.event_type,
        deliveryId: delivery.id,
        secret: delivery.secret,
      })
      .then((outcome) => {
        observeOutcome(delivery, outcome);
        this.pendingOutcomes.push({ id: delivery.id, outcome, deliveredAt: new Date() });
        void this.flush();
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (perWebhook.get(delivery.webhook_id) ?? 1) - 1;
        if (left === 0) perWebhook.delete(delivery.webhook_id);
        else perWebhook.set(delivery.webhook_id, left);
        metrics.inFlight.dec();
        if (this.queueMayHaveWork) this.kick();
      });
    this.inFlight.set(delivery.id, sending);
  }

  private flush(): Promise<void> {
    this.flushing ??= this.flushLoop().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async flushLoop(): Promise<void> {
    let failures = 0;
    while (this.pendingOutcomes.length > 0) {
      const batch = this.pendingOutcomes.splice(0, outcomeBatchSize);
      try {
        await recordOutcomes(this.options.pool, this.options.workerId, batch);
        failures = 0;
      } catch (error) {
        failures += 1;
        if (isTransientDatabaseError(error) && failures < 5) {
          this.pendingOutcomes.unshift(...batch);
          await sleep(100 * 2 ** failures);
          continue;
        }
        // The rows stay in flight; when their lease expires they are sent again (same event id).
        this.options.logger.error(
          { err: error, deliveries: batch.length },
          "recording delivery outcomes failed",
        );
      }
    }
  }
}
