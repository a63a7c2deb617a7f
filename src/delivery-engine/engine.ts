import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type Config, deliveryConnectTimeoutMs } from "../config.js";
import { createPool, type Pool, withTransaction } from "../db/pool.js";
import { isUniqueViolation } from "../db/sqlstate.js";
import { deliveryNotFound } from "../deliveries/not-found.js";
import { findDeliveryRecord } from "../deliveries/store.js";
import { exampleDeploymentPayload } from "../deliveries/test-event.js";
import { ConflictError, GoneError, NotFoundError } from "../errors.js";
import type { DeploymentEventType } from "../event-types.js";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import type { ProjectRow } from "../projects/store.js";
import type { WebhookRow } from "../webhooks/store.js";
import { createDeliveryAgent, destinationPolicyOf } from "./destination-policy.js";
import { createEnvelope } from "./envelope.js";
import {
  claimSessionSettings,
  eventExists,
  insertEventRecord,
  insertLeasedDelivery,
  recordOutcomes,
} from "./queue.js";
import { createSender, type DeliveryOutcome } from "./sender.js";
import { DeliveryWorker, observeOutcome } from "./worker.js";

/** Spec §2.7, and the new attempt's delivery record (an addition: clients link to it). */
export interface RetryResult {
  success: boolean;
  status_code: number;
  error_message: string | null;
  attempt_number: number;
  delivery_id: number;
}

export interface TestEventResult extends RetryResult {
  event_id: string;
}

export interface DeliveryEngine {
  replay(webhook: WebhookRow, deliveryId: number): Promise<RetryResult>;
  sendTestEvent(
    project: ProjectRow,
    webhook: WebhookRow,
    eventType: DeploymentEventType,
  ): Promise<TestEventResult>;
  /** Claim now: used after emitting in-process, saving the NOTIFY round trip. */
  wake(): void;
  stop(timeoutMs: number): Promise<void>;
}

const maxAttemptNumberRaces = 5;

/** The webhook was deleted between being read and its delivery being written. */
const webhookGone = (webhook: WebhookRow) =>
  new NotFoundError(`Webhook ${webhook.id} not found in project ${webhook.project_id}.`);

function retryResult(outcome: DeliveryOutcome, row: { id: number; attempt_number: number }): RetryResult {
  return {
    success: outcome.success,
    status_code: outcome.statusCode,
    error_message: outcome.errorMessage,
    attempt_number: row.attempt_number,
    delivery_id: row.id,
  };
}

export function createDeliveryEngine(options: {
  pool: Pool;
  databaseUrl: string;
  config: Config["delivery"];
  logger: Logger;
}): DeliveryEngine & { start(): Promise<void> } {
  const { pool, config, logger } = options;
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  // No per-origin connection cap: concurrency is bounded by the worker (globally and per webhook), and
  // a cap per origin would let one hanging webhook block others that share its host.
  const agent = createDeliveryAgent({
    policy: destinationPolicyOf(config),
    connectTimeoutMs: deliveryConnectTimeoutMs(config.timeoutMs),
  });
  const send = createSender({
    dispatcher: agent,
    timeoutMs: config.timeoutMs,
    responseBodyLimitBytes: config.responseBodyLimitBytes,
  });
  const workerPool = createPool(options.databaseUrl, 2, claimSessionSettings);
  const worker = new DeliveryWorker({
    pool: workerPool,
    databaseUrl: options.databaseUrl,
    workerId,
    concurrency: config.concurrency,
    perWebhookConcurrency: config.perWebhookConcurrency,
    leaseMs: config.leaseMs,
    timeoutMs: config.timeoutMs,
    pollIntervalMs: config.pollIntervalMs,
    retryDelaysMs: config.retryDelaysMs,
    send,
    logger: logger.child({ component: "delivery-worker" }),
  });
  const lease = { workerId, leaseMs: config.leaseMs };
  let stopping: Promise<void> | undefined;
  /** Replays and test events being sent now: shutdown waits for them before the pool ends. */
  const synchronousSends = new Set<Promise<unknown>>();

  /** Sends a delivery row this process leased and records the outcome before answering. */
  function sendLeased(
    webhook: WebhookRow,
    delivery: { id: number; eventType: string; body: string },
  ): Promise<DeliveryOutcome> {
    const sending = sendAndRecord(webhook, delivery);
    synchronousSends.add(sending);
    void sending.catch(() => {}).finally(() => synchronousSends.delete(sending));
    return sending;
  }

  async function sendAndRecord(
    webhook: WebhookRow,
    delivery: { id: number; eventType: string; body: string },
  ): Promise<DeliveryOutcome> {
    metrics.inFlight.inc();
    try {
      const outcome = await send({
        url: webhook.url,
        body: delivery.body,
        eventType: delivery.eventType,
        deliveryId: delivery.id,
        secret: webhook.secret,
      });
      observeOutcome({ webhook_id: webhook.id, event_type: delivery.eventType }, outcome);
      await recordOutcomes(pool, workerId, [{ id: delivery.id, outcome, deliveredAtMs: Date.now() }]);
      return outcome;
    } finally {
      metrics.inFlight.dec();
    }
  }

  return {
    start: () => worker.start(),
    wake: () => worker.wake(),
    stop(timeoutMs) {
      stopping ??= Promise.all([
        worker.stop(timeoutMs),
        Promise.race([
          Promise.allSettled(synchronousSends),
          new Promise((resolve) => setTimeout(resolve, timeoutMs)),
        ]),
      ]).then(() => workerPool.end());
      return stopping;
    },

    async replay(webhook, deliveryId) {
      const original = await findDeliveryRecord(pool, webhook.id, deliveryId);
      if (!original) throw deliveryNotFound(deliveryId, webhook.id);
      if (!webhook.enabled) {
        throw new ConflictError(
          `Webhook ${webhook.id} is disabled; enable it before retrying its deliveries.`,
        );
      }
      // attempt_number = highest for this event and webhook + 1; two concurrent retries of the same
      // event collide on the unique key and the loser takes the next number.
      let row: { id: number; attempt_number: number } | undefined;
      for (let race = 0; ; race++) {
        try {
          row = await insertLeasedDelivery(
            pool,
            {
              webhookId: webhook.id,
              eventId: original.event_id,
              eventType: original.event_type,
              attemptNumber: null,
            },
            lease,
          );
          break;
        } catch (error) {
          if (!isUniqueViolation(error) || race >= maxAttemptNumberRaces) throw error;
        }
      }
      if (!row) {
        if (await eventExists(pool, original.event_id)) throw webhookGone(webhook);
        throw new GoneError(
          `The event of delivery ${deliveryId} (${original.event_id}) was removed by retention while it was being replayed; events older than RETENTION_DAYS are not kept.`,
        );
      }
      const outcome = await sendLeased(webhook, {
        id: row.id,
        eventType: original.event_type,
        body: original.payload,
      });
      metrics.replays.inc({ outcome: outcome.success ? "success" : "failure" });
      return retryResult(outcome, row);
    },

    async sendTestEvent(project, webhook, eventType) {
      const envelope = createEnvelope(eventType, project.id, exampleDeploymentPayload(eventType, project));
      const body = JSON.stringify(envelope);
      const row = await withTransaction(pool, async (client) => {
        await insertEventRecord(client, {
          id: envelope.id,
          projectId: project.id,
          eventType,
          body,
          createdAt: new Date(envelope.timestamp),
        });
        const inserted = await insertLeasedDelivery(
          client,
          { webhookId: webhook.id, eventId: envelope.id, eventType, attemptNumber: 1 },
          lease,
        );
        // Thrown inside the transaction, so the event is not recorded either.
        if (!inserted) throw webhookGone(webhook);
        return inserted;
      });
      const outcome = await sendLeased(webhook, { id: row.id, eventType, body });
      metrics.testEvents.inc({ outcome: outcome.success ? "success" : "failure" });
      // delivery_id and event_id first, where the test event's answer (and the CLI's output) had them.
      const { delivery_id, ...result } = retryResult(outcome, row);
      return { delivery_id, event_id: envelope.id, ...result };
    },
  };
}
