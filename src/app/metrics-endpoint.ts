import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import type { Router } from "express";
import type { AuthPacer } from "../api-keys/auth-pacing.js";
import type { Pool } from "../db/pool.js";
import { queueStats } from "../delivery-engine/queue.js";
import { metrics, registry, registryWithoutWebhookIds } from "../metrics.js";
import { requireMetricsToken } from "./metrics-access.js";

/**
 * How often, at most, the queue gauges are read from Postgres: counting the unfinished deliveries
 * walks their index, which a scrape every few seconds from several Prometheus servers must not
 * repeat each time (and under a large backlog the walk is long).
 */
export const queueStatsMaxAgeMs = 5_000;

const gzip = promisify(gzipCallback);

export interface MetricsEndpointSettings {
  /** METRICS_TOKEN: with it /metrics needs the token and shows delivery counts per webhook. */
  token?: string | undefined;
  /** METRICS_CACHE_MS: how long one rendering is reused. */
  cacheMs?: number;
  queueStatsMaxAgeMs?: number;
  /** Paces wrong tokens (AUTH_FAILURES_PER_MINUTE), with the API's refused credentials. */
  pacer?: AuthPacer | undefined;
  /** Renders the exposition text; a seam for tests that count renders. */
  render?: () => Promise<string>;
}

/** Keeps the last result of `produce` for `maxAgeMs`, and lets callers that come while it runs share that run. */
function sharedAndReused<T>(maxAgeMs: number, produce: () => Promise<T>): () => Promise<T> {
  let last: { value: T; at: number } | undefined;
  let running: Promise<T> | undefined;
  return async () => {
    if (last && Date.now() - last.at < maxAgeMs) return last.value;
    running ??= produce()
      .then((value) => {
        last = { value, at: Date.now() };
        return value;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/**
 * Prometheus scrape endpoint. Rendering walks every series, so one rendering serves every scrape for
 * `cacheMs` and scrapes that arrive while it runs wait for it rather than start their own: 64
 * scrapers at once cost one rendering, not 64. The queue gauges (shared by all replicas) are read
 * from Postgres at most every 5 s.
 */
export function registerMetricsEndpoint(
  router: Router,
  pool: Pool,
  settings: MetricsEndpointSettings = {},
): void {
  const view = settings.token === undefined ? registryWithoutWebhookIds : registry;
  const refreshQueueGauges = sharedAndReused(settings.queueStatsMaxAgeMs ?? queueStatsMaxAgeMs, async () => {
    try {
      const stats = await queueStats(pool);
      metrics.queueDepth.set(stats.depth);
      metrics.queueOldestAge.set(stats.oldestAgeSeconds);
      metrics.retriesWaiting.set(stats.retriesWaiting);
      metrics.webhooksThrottled.set(stats.throttledWebhooks);
      return true;
    } catch {
      // The database being down must not hide the process metrics: the gauges keep their last value,
      // and the read is tried again after the same max age, not on every scrape.
      return false;
    }
  });
  const renderText = settings.render ?? (() => view.metrics());
  // Kept as bytes, plain and gzipped (Prometheus asks for gzip), so a reused rendering costs each
  // scrape only its write: no re-encoding, no compression and no ETag hashing per response.
  const rendered = sharedAndReused(settings.cacheMs ?? 0, async () => {
    await refreshQueueGauges();
    const plain = Buffer.from(await renderText());
    return { plain, gzipped: await gzip(plain) };
  });
  const access = settings.token === undefined ? [] : [requireMetricsToken(settings.token, settings.pacer)];
  router.get("/metrics", ...access, async (req, res) => {
    const { plain, gzipped } = await rendered();
    const useGzip = req.acceptsEncodings("gzip", "identity") === "gzip";
    res.set({ "Content-Type": view.contentType, Vary: "Accept-Encoding" });
    if (useGzip) res.set("Content-Encoding", "gzip");
    res.end(useGzip ? gzipped : plain);
  });
}
