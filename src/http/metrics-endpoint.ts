import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { queueStats } from "../delivery-engine/outbox.js";
import { metrics, registry } from "../metrics.js";

/** Prometheus scrape endpoint. Queue gauges are read from Postgres at scrape time (shared by replicas). */
export function registerMetricsEndpoint(router: Router, pool: Pool): void {
  router.get("/metrics", async (_req, res) => {
    try {
      const stats = await queueStats(pool);
      metrics.queueDepth.set(stats.depth);
      metrics.queueOldestAge.set(stats.oldestAgeSeconds);
    } catch {
      // The database being down must not hide the process metrics; the gauges keep their last value.
    }
    res.type(registry.contentType).send(await registry.metrics());
  });
}
