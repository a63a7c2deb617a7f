import { ConnectionEpisodes } from "../db/connection-episodes.js";
import type { DatabaseTimeouts } from "../db/connection-options.js";
import { createPool, type Pool } from "../db/pool.js";
import type { Logger } from "../logger.js";
import type { OutcomePolicy } from "./outcome-policy.js";
import { pauseWebhook } from "./pace.js";
import {
  type ClaimedDelivery,
  type ClaimRequest,
  claimSessionSettings,
  leaseSessionSettings,
  queueDueRetries,
  type RecordedOutcome,
  recordAndClaim,
  releaseClaims,
  releaseClaimsOf,
  type WorkerConnections,
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

/**
 * The worker's connections (WorkerConnections, queue.ts), one each: `outcomes` with
 * claimSessionSettings, `leases` with leaseSessionSettings. A turn uses both at once. An outage is
 * logged once for both.
 */
export function createWorkerConnections(
  databaseUrl: string,
  options: { timeouts?: DatabaseTimeouts | undefined; logger: Logger },
): { outcomes: Pool; leases: Pool; end(): Promise<void> } {
  const episodes = new ConnectionEpisodes("engine", options.logger);
  const connection = { role: "engine" as const, ...options, episodes };
  const outcomes = createPool(databaseUrl, 1, claimSessionSettings, connection);
  const leases = createPool(databaseUrl, 1, leaseSessionSettings, connection);
  return { outcomes, leases, end: () => Promise.all([outcomes.end(), leases.end()]).then(() => {}) };
}

/**
 * The worker's queue in Postgres: its statements on `connections` (createWorkerConnections), LISTEN
 * outside them.
 */
export function databaseWorkerQueue(options: {
  connections: WorkerConnections;
  /** For the LISTEN connection, which lives outside the pools (its name and timeouts, engine.ts). */
  listenerConnection: ListenerConnection;
  workerId: string;
  outcomePolicy: OutcomePolicy;
  logger: Logger;
}): WorkerQueue {
  const { connections, workerId, outcomePolicy } = options;
  const { leases } = connections;
  return {
    recordAndClaim: (outcomes, claim) =>
      recordAndClaim(connections, workerId, outcomes, claim, outcomePolicy),
    queueDueRetries: (limit) => queueDueRetries(leases, limit),
    releaseClaimsOf: (ids) => releaseClaimsOf(leases, workerId, ids),
    pauseWebhook: (pause) => pauseWebhook(leases, { ...pause, workerId }),
    releaseClaims: () => releaseClaims(leases, workerId),
    listen: (onNotify) => new QueueListener(options.listenerConnection, onNotify, options.logger),
  };
}
