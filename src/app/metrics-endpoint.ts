import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { queueStats } from "../delivery-engine/queue.js";
import { metrics, registry } from "../metrics.js";

/**
 * How often, at most, the queue gauges are read from Postgres: counting the unfinished deliveries
 * walks their index, which a scrape every few seconds from several Prometheus servers must not
 * repeat each time (and under a large backlog the walk is long).
 */
export const queueStatsMaxAgeMs = 5_000;

/** Prometheus scrape endpoint. The queue gauges (shared by all replicas) are refreshed at most every 5 s. */
export function registerMetricsEndpoint(
  router: Router,
  pool: Pool,
  options: { queueStatsMaxAgeMs?: number } = {},
): void {
  const maxAgeMs = options.queueStatsMaxAgeMs ?? queueStatsMaxAgeMs;
  let refreshedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;
  const refreshQueueGauges = async () => {
    if (Date.now() - refreshedAt < maxAgeMs) return;
    refreshing ??= queueStats(pool)
      .then((stats) => {
        metrics.queueDepth.set(stats.depth);
        metrics.queueOldestAge.set(stats.oldestAgeSeconds);
        metrics.retriesWaiting.set(stats.retriesWaiting);
        refreshedAt = Date.now();
      })
      // The database being down must not hide the process metrics; the gauges keep their last value.
      .catch(() => {})
      .finally(() => {
        refreshing = undefined;
      });
    await refreshing;
  };
  router.get("/metrics", async (_req, res) => {
    await refreshQueueGauges();
    res.type(registry.contentType).send(await registry.metrics());
  });
}
