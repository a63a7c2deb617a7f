import type { Pool } from "../db/pool.js";
import type { Logger } from "../logger.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import { pauseWebhook } from "./pace.js";
import {
  type ClaimedDelivery,
  type ClaimRequest,
  queueDueRetries,
  type RecordedOutcome,
  recordAndClaim,
  releaseClaims,
  releaseClaimsOf,
} from "./queue.js";
import { type ListenerConnection, QueueListener } from "./queue-listener.js";

/**
 * Everything the delivery worker asks of the database, bound to one worker: the queue's statements
 * (queue.ts) and the LISTEN that wakes it. The worker knows only this seam, so its states and timers
 * are unit-tested against a queue kept in memory (test/unit/delivery-worker.test.ts).
 */
export interface WorkerQueue {
  /** Records finished outcomes and claims up to `claim.limit` due deliveries, in one statement. */
  recordAndClaim(outcomes: RecordedOutcome[], claim: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Queues automatic retries whose time came (at most `limit`); how many it queued. */
  queueDueRetries(limit: number): Promise<number>;
  /** Hands these claimed rows back to the queue. */
  releaseClaimsOf(ids: number[]): Promise<void>;
  /**
   * Pauses a webhook for every replica until `untilMs` (its receiver's Retry-After) and hands the
   * delivery that was answered so back to the queue (pace.ts).
   */
  pauseWebhook(pause: {
    webhookId: number;
    deliveryId: number;
    untilMs: number;
    reason: string;
  }): Promise<void>;
  /** Hands every unfinished claim of this worker back to the queue; how many. */
  releaseClaims(): Promise<number>;
  /** A listener calling `onNotify` for every NOTIFY of new work (and once after a lost LISTEN). */
  listen(onNotify: () => void): { start(): Promise<void>; stop(): Promise<void> };
}

/** The worker's queue in Postgres: `pool` with claimSessionSettings (queue.ts), LISTEN outside it. */
export function databaseWorkerQueue(options: {
  pool: Pool;
  /** For the LISTEN connection, which lives outside the pool (its name and timeouts, engine.ts). */
  listenerConnection: ListenerConnection;
  workerId: string;
  outcomePolicy: OutcomePolicy;
  logger: Logger;
}): WorkerQueue {
  const { pool, workerId, outcomePolicy } = options;
  return {
    recordAndClaim: (outcomes, claim) => recordAndClaim(pool, workerId, outcomes, claim, outcomePolicy),
    queueDueRetries: (limit) => queueDueRetries(pool, limit),
    releaseClaimsOf: (ids) => releaseClaimsOf(pool, workerId, ids),
    pauseWebhook: (pause) => pauseWebhook(pool, { ...pause, workerId }),
    releaseClaims: () => releaseClaims(pool, workerId),
    listen: (onNotify) => new QueueListener(options.listenerConnection, onNotify, options.logger),
  };
}
