import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { abortable } from "../abortable.js";
import { connectionOptions, type DatabaseTimeouts } from "../db/connection-options.js";
import type { Pool } from "../db/pool.js";
import type { RolloutDetails } from "../formats/rollout-details.js";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import type { DeliveryShape } from "./delivery-shape.js";
import { type AllowList, createDeliveryAgent, destinationPolicyOf } from "./destination-policy.js";
import type { HandOver } from "./emit.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import { type ClaimedDelivery, recordOutcomes } from "./queue.js";
import { createSender, type DeliveryOutcome, type OpenSecret } from "./sender.js";
import {
  type SendRefusal,
  type SendSlot,
  type SynchronousSendSettings,
  SynchronousSends,
} from "./synchronous-sends.js";
import { deliveryConnectTimeoutMs } from "./timing.js";
import { DeliveryWorker } from "./worker.js";
import { observeOutcome } from "./worker-outcomes.js";
import { createWorkerConnections, databaseWorkerQueue } from "./worker-queue.js";

/** The DELIVERY_* settings (app/config.ts), as the engine takes them. */
export interface DeliverySettings {
  concurrency: number;
  perWebhookConcurrency: number;
  timeoutMs: number;
  leaseMs: number;
  pollIntervalMs: number;
  responseBodyLimitBytes: number;
  /** The waits before automatic retries 1–5 (webhooks with a retry policy), ±20 % jitter. */
  retryDelaysMs: number[];
  /** The longest pause a receiver's Retry-After may ask for (DELIVERY_RETRY_AFTER_MAX_SECONDS); 1 h when absent. */
  retryAfterMaxMs?: number;
  allowPrivateNetworks: boolean;
  /** Private destinations the admin allows even when allowPrivateNetworks is false. */
  allowedDestinations: { entries: string[]; list: AllowList } | undefined;
  /** Deliveries may reach only what allowedDestinations names (an egress allow-list). */
  allowedDestinationsOnly: boolean;
  /** A project's share of the replays and test events (SYNC_SENDS_*). */
  synchronousSends: SynchronousSendSettings;
}

/** Where a delivery goes: what the engine needs of a webhook. */
export interface DeliveryTarget {
  id: number;
  url: string;
  /** As stored (sealed); opened only to sign. */
  secret: string | null;
  /** Its delivery settings (delivery-shape.ts); absent ones are the defaults. */
  format?: DeliveryShape["format"];
  cloudevents_mode?: DeliveryShape["cloudevents_mode"];
  template?: string | null;
  template_content_type?: string | null;
  signature_scheme?: DeliveryShape["signature_scheme"];
  /** The custom headers, sealed. */
  headers?: string | null;
  /** Whether its deliveries carry payload.rollout. */
  rollout_details?: boolean;
}

/** A row this process inserted already leased to itself (insertLeasedDelivery, queue.ts). */
export interface LeasedDelivery {
  id: number;
  eventType: string;
  eventId: string;
  /** The envelope text, sent byte for byte (or rendered by the webhook's format). */
  body: string;
  /** A body kept from an earlier attempt, sent instead (replays): the same bytes with the same headers. */
  stored?: { body: string; bodyHeaders: Record<string, string> } | undefined;
  /** The event's rollout details, for a body rendered anew (deployments/rollout-details.ts). */
  rollout?: RolloutDetails | null;
}

/** The shape of a synchronous send, null when the target and the row ask for nothing but the default. */
export function leasedShape(target: DeliveryTarget, delivery: LeasedDelivery): DeliveryShape | null {
  const shape: DeliveryShape = {
    format: target.format ?? "envelope",
    cloudevents_mode: target.cloudevents_mode ?? "structured",
    template: target.template ?? null,
    template_content_type: target.template_content_type ?? null,
    signature_scheme: target.signature_scheme ?? "hmac-sha256",
    headers: target.headers ?? null,
    event_id: delivery.eventId,
    body: delivery.stored?.body ?? null,
    body_headers: delivery.stored?.bodyHeaders ?? null,
    rollout_details: target.rollout_details ?? false,
    rollout: delivery.rollout ?? null,
  };
  const plain =
    shape.format === "envelope" &&
    shape.signature_scheme === "hmac-sha256" &&
    shape.headers === null &&
    !shape.rollout_details &&
    shape.body === null;
  return plain ? null : shape;
}

/** How an emit in this process hands deliveries to its worker (emit.ts): what the operator is given. */
export type EventHandOver = Pick<DeliveryEngine, "handOverLease" | "handOver">;

export interface DeliveryEngine {
  /** The lease of the rows sendLeased sends: this worker's, for DELIVERY_LEASE_MS. */
  readonly lease: { workerId: string; leaseMs: number };
  /**
   * A place for a replay or test event of the project's webhook, within the bounds every send shares
   * (synchronous-sends.ts), or why there is none now. Taken before anything is recorded; sendLeased
   * releases it, or the caller when it sends nothing after all.
   */
  reserveSend(projectId: number, webhookId: number): SendSlot | SendRefusal;
  /** Whether the project is over its share of them or its pace now (a peek: nothing is taken). */
  projectRefusal(projectId: number): SendRefusal | undefined;
  /**
   * Sends a leased row now in the slot reserved for it and records its outcome before returning it
   * (replays, test events). Should this process die mid-send, the lease expires and a worker sends it.
   */
  sendLeased(target: DeliveryTarget, delivery: LeasedDelivery, slot: SendSlot): Promise<DeliveryOutcome>;
  /** Claim now: used after emitting in-process, saving the NOTIFY round trip. */
  wake(): void;
  /**
   * What an emit in this process may hand straight to this replica's worker (emitEvents' handOver);
   * undefined when it has no free slot or runs no worker: the emit queues its deliveries as usual.
   */
  handOverLease(): HandOver | undefined;
  /** The deliveries an emit handed over, once its transaction committed: sent like claimed ones. */
  handOver(deliveries: ClaimedDelivery[]): void;
  /** Sends of the worker open past twice the longest a send can take: 0 unless a slot was lost. */
  stuckSends(): number;
  stop(timeoutMs: number): Promise<void>;
}

/**
 * The delivery engine: the queue's workers and the synchronous sends of this process, one sender and
 * one connection agent (with the destination policy) for both. It sends and records; what to send, and
 * why, is the callers' (the outbox write, emit.ts; the use cases of the deliveries feature).
 */
export function createDeliveryEngine(options: {
  pool: Pool;
  databaseUrl: string;
  /** Bounds for the worker's connections (DATABASE_*_TIMEOUT_MS); unset, pg's defaults (tests). */
  databaseTimeouts?: DatabaseTimeouts | undefined;
  settings: DeliverySettings;
  /** Opens a webhook's stored secret to sign with (the secret keys, held by the service). */
  openSecret: OpenSecret;
  /** The rule the webhooks opted into, applied as outcomes are recorded (webhooks/auto-disable.ts). */
  outcomePolicy: OutcomePolicy;
  logger: Logger;
}): DeliveryEngine & { start(): Promise<void> } {
  const { pool, settings, logger } = options;
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  // No per-origin connection cap: concurrency is bounded by the worker (globally and per webhook), and
  // a cap per origin would let one hanging webhook block others that share its host.
  const agent = createDeliveryAgent({
    policy: destinationPolicyOf(settings),
    connectTimeoutMs: deliveryConnectTimeoutMs(settings.timeoutMs),
  });
  const send = createSender({
    dispatcher: agent,
    timeoutMs: settings.timeoutMs,
    responseBodyLimitBytes: settings.responseBodyLimitBytes,
    openSecret: options.openSecret,
  });
  const timeouts = options.databaseTimeouts;
  const workerConnections = createWorkerConnections(options.databaseUrl, { timeouts, logger });
  const worker = new DeliveryWorker({
    queue: databaseWorkerQueue({
      connections: workerConnections,
      listenerConnection: connectionOptions(options.databaseUrl, "listener", timeouts),
      workerId,
      outcomePolicy: options.outcomePolicy,
      logger: logger.child({ component: "delivery-worker" }),
    }),
    workerId,
    concurrency: settings.concurrency,
    perWebhookConcurrency: settings.perWebhookConcurrency,
    leaseMs: settings.leaseMs,
    timeoutMs: settings.timeoutMs,
    pollIntervalMs: settings.pollIntervalMs,
    retryDelaysMs: settings.retryDelaysMs,
    retryAfterMaxMs: settings.retryAfterMaxMs ?? 3_600_000,
    send,
    logger: logger.child({ component: "delivery-worker" }),
  });
  const synchronous = new SynchronousSends(worker, {
    // Not waiting for the worker's slots, they take at most half as many again (docs/deliveries.md).
    replica: Math.max(1, Math.floor(settings.concurrency / 2)),
    perWebhook: settings.perWebhookConcurrency,
    ...settings.synchronousSends,
  });
  let stopping: Promise<void> | undefined;
  /** Synchronous sends in progress: shutdown waits for them before the pool ends. */
  const synchronousSends = new Set<Promise<unknown>>();

  async function sendAndRecord(
    target: DeliveryTarget,
    delivery: LeasedDelivery,
    slot: SendSlot,
  ): Promise<DeliveryOutcome> {
    metrics.inFlight.inc();
    let outcome: DeliveryOutcome | undefined;
    try {
      outcome = await send({
        url: target.url,
        body: delivery.body,
        eventType: delivery.eventType,
        deliveryId: delivery.id,
        secret: target.secret,
        shape: leasedShape(target, delivery),
      });
      observeOutcome({ webhook_id: target.id, event_type: delivery.eventType }, outcome);
      await recordOutcomes(
        pool,
        [{ id: delivery.id, outcome, deliveredAtMs: Date.now() }],
        options.outcomePolicy,
      );
      return outcome;
    } finally {
      slot.release(outcome);
      metrics.inFlight.dec();
    }
  }

  return {
    lease: { workerId, leaseMs: settings.leaseMs },
    start: () => worker.start(),
    wake: () => worker.wake(),
    handOverLease: () => worker.handOverLease(),
    handOver: (deliveries) => worker.takeHandedOver(deliveries),
    stuckSends: () => worker.stuckSends(),
    reserveSend: (projectId, webhookId) => synchronous.reserve(projectId, webhookId),
    projectRefusal: (projectId) => synchronous.projectRefusal(projectId),
    sendLeased(target, delivery, slot) {
      const sending = sendAndRecord(target, delivery, slot);
      synchronousSends.add(sending);
      void sending.catch(() => {}).finally(() => synchronousSends.delete(sending));
      return sending;
    },
    stop(timeoutMs) {
      stopping ??= Promise.all([
        worker.stop(timeoutMs),
        abortable(Promise.allSettled(synchronousSends), AbortSignal.timeout(timeoutMs)).catch(() => {}),
      ]).then(() => workerConnections.end());
      return stopping;
    },
  };
}
