import type { Server } from "node:http";
import type { KubeConfig } from "@kubernetes/client-node";
import { createPool, type Pool } from "../db/pool.js";
import { databaseReadiness } from "../db/readiness.js";
import { destinationPolicyOf } from "../delivery-engine/destination-policy.js";
import { createDeliveryEngine, type DeliveryEngine } from "../delivery-engine/engine.js";
import { closeTemplateThreads, configureTemplateThreads } from "../formats/template.js";
import type { Logger } from "../logger.js";
import type { RunningOperator } from "../operator/operator.js";
import {
  defaultRetentionTuning,
  type RetentionSweeper,
  startRetentionSweeper,
} from "../retention/sweeper.js";
import { loadSecretBox } from "../secrets/keys.js";
import { autoDisablePolicy } from "../webhooks/auto-disable.js";
import { startClusterRoles } from "./cluster-roles.js";
import type { Config } from "./config.js";
import { openDatabase } from "./database-startup.js";
import { createApp } from "./http-app.js";
import { listenAndAnnounce } from "./http-listener.js";

export interface RunningService {
  url: string;
  pool: Pool;
  logger: Logger;
  engine: DeliveryEngine;
  retention: RetentionSweeper;
  /** The controller role, when running against a cluster. */
  operator: RunningOperator | undefined;
  /** Graceful: stop accepting, let in-flight requests finish (bounded), close the pool and database. */
  close(): Promise<void>;
}

async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}

export interface ServiceOptions {
  /** The cluster to run the controllers against; by default from KUBERNETES (in-cluster or kubeconfig). */
  kubeConfig?: KubeConfig | undefined;
}

export async function startService(
  config: Config,
  logger: Logger,
  options: ServiceOptions = {},
): Promise<RunningService> {
  // First: a missing key is a configuration error, reported before anything touches the database.
  const box = await loadSecretBox(config.secretKeys, logger);
  configureTemplateThreads(config.templates);
  const { embedded, databaseUrl, pool } = await openDatabase(config, box, logger);
  const { timeouts } = config.database;

  const engine = createDeliveryEngine({
    pool,
    databaseUrl,
    databaseTimeouts: timeouts,
    settings: config.delivery,
    openSecret: (sealed) => box.open(sealed),
    outcomePolicy: autoDisablePolicy,
    logger,
  });
  if (config.delivery.workers) await engine.start();
  const retention = startRetentionSweeper({
    pool,
    settings: { days: config.retentionDays, ...defaultRetentionTuning },
    logger,
  });
  logger.info(
    { retentionDays: config.retentionDays },
    config.retentionDays === 0
      ? "retention off: delivery records and events are kept forever (RETENTION_DAYS=0)"
      : "delivery records and events older than RETENTION_DAYS are removed",
  );
  const { leaderPool, operator, tokenReviewer, aggregatedApi } = await startClusterRoles(
    config,
    options,
    { databaseUrl, engine, box, pool },
    logger,
  );
  const destinationPolicy = destinationPolicyOf(config.delivery);
  logDestinationPolicy(logger, config.delivery);
  const readyTimeoutMs = config.database.readyTimeoutMs;
  const readyPool = createPool(
    databaseUrl,
    1,
    {},
    {
      role: "readyz",
      timeouts: { ...timeouts, connectTimeoutMs: readyTimeoutMs, statementTimeoutMs: readyTimeoutMs },
      logger,
    },
  );
  const app = createApp({
    pool,
    databaseReady: databaseReadiness(readyPool, readyTimeoutMs),
    logger,
    engine,
    tokenReviewer,
    dashboard: config.dashboard.enabled,
    destinationPolicy,
    webhooksPerProjectLimit: config.webhooksPerProjectLimit,
    secrets: box,
    kubernetes: operator !== undefined,
    retryDelaysMs: config.delivery.retryDelaysMs,
    metrics: config.metrics,
    authFailuresPerMinute: config.http.authFailuresPerMinute,
    trustedProxies: config.http.trustedProxies?.ranges,
    apiKeyCacheTtlMs: config.http.apiKeyCacheTtlMs,
    previews: config.previews,
  });
  const { server, url } = await listenAndAnnounce(config, app, embedded !== undefined, logger);

  return {
    url,
    pool,
    logger,
    engine,
    retention,
    operator,
    close: async () => {
      logger.info("shutting down");
      await operator?.stop();
      await retention.stop();
      await closeServer(server, config.shutdownTimeoutMs);
      await aggregatedApi?.close();
      await engine.stop(config.shutdownTimeoutMs);
      await Promise.all([pool.end(), readyPool.end(), leaderPool?.end(), closeTemplateThreads()]);
      await embedded?.stop();
      logger.info("stopped");
    },
  };
}

/** Says at start-up which destinations deliveries may reach, so an open policy is never a surprise. */
function logDestinationPolicy(logger: Logger, delivery: Config["delivery"]): void {
  const allowList = delivery.allowedDestinations?.entries ?? [];
  if (delivery.allowPrivateNetworks) {
    logger.warn(
      "deliveries and test events may reach loopback and private networks (DELIVERY_ALLOW_PRIVATE_NETWORKS=true, " +
        "the standalone default); set it to false, with DELIVERY_ALLOWED_DESTINATIONS for trusted receivers, " +
        "when API keys are given to others",
    );
  } else {
    logger.info(
      { allowedDestinations: allowList },
      "private delivery destinations are refused except the allow-list",
    );
  }
}
