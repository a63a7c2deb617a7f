import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";
import { bootstrapApiKey } from "../api-keys/bootstrap.js";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../db/embedded.js";
import { migrate } from "../db/migrate.js";
import { createPool, type Pool } from "../db/pool.js";
import { databaseReadiness } from "../db/readiness.js";
import { destinationPolicyOf } from "../delivery-engine/destination-policy.js";
import { createDeliveryEngine, type DeliveryEngine } from "../delivery-engine/engine.js";
import { closeTemplateThreads, configureTemplateThreads } from "../formats/template.js";
import { boundConnections, boundedServerOptions } from "../http/connection-bounds.js";
import type { Logger } from "../logger.js";
import { loadKubeConfig, operatorNamespace } from "../operator/kube-config.js";
import type { RunningOperator } from "../operator/operator.js";
import {
  defaultRetentionTuning,
  type RetentionSweeper,
  startRetentionSweeper,
} from "../retention/sweeper.js";
import { loadSecretBox } from "../secrets/keys.js";
import { reencryptSecrets } from "../secrets/reencrypt.js";
import { version } from "../version.js";
import { autoDisablePolicy } from "../webhooks/auto-disable.js";
import type { Config } from "./config.js";
import { findDashboardDir } from "./dashboard.js";
import { createApp } from "./http-app.js";

// Required, not imported: `import … from "node:http"` builds Node's ES module view of http, which reads
// every export, the lazy WebSocket and MessageEvent among them, and so loads Node's bundled undici
// (fetch, WebSocket: about 70 internal modules, 10 MiB resident) that the service never uses.
const { createServer } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

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

async function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
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
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.database.url;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.database.dataDir,
      port: config.database.embeddedPort,
      logger,
    });
    databaseUrl = embedded.url;
  }
  const { timeouts } = config.database;
  const pool = createPool(databaseUrl, config.database.poolSize, {}, { role: "api", timeouts, logger });
  try {
    const applied = await migrateWithin(databaseUrl, config.database, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
    await bootstrapApiKey(pool, config.apiKey, logger);
    const sealed = await reencryptSecrets(pool, box, { rotate: false });
    if (sealed > 0)
      logger.info({ webhooks: sealed, keyId: box.currentKeyId }, "clear-text webhook secrets encrypted");
  } catch (error) {
    await pool.end();
    await embedded?.stop();
    throw error;
  }

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
  const kubeConfig =
    "kubeConfig" in options ? options.kubeConfig : await loadKubeConfig(config.kubernetes.mode);
  // The controllers (and client-node behind them) are loaded only where a cluster is.
  // The controllers' own pool (opened only while this replica leads): their work never waits behind the
  // API's, and pg_stat_activity tells them apart.
  const leaderPool = kubeConfig
    ? createPool(
        databaseUrl,
        Math.max(2, Math.ceil(config.database.poolSize / 2)),
        {},
        {
          role: "leader",
          timeouts,
          logger,
        },
      )
    : undefined;
  const operator = leaderPool
    ? (await import("../operator/operator.js")).startOperator({
        kubeConfig: kubeConfig as KubeConfig,
        pool: leaderPool,
        destinationPolicy: destinationPolicyOf(config.delivery),
        secrets: box,
        config: { ...config.kubernetes, leaseNamespace: operatorNamespace(config.kubernetes.podNamespace) },
        logger,
        handOver: engine,
      })
    : undefined;
  if (!operator) {
    logger.info(
      "no Kubernetes cluster configured: running the API and delivery workers only. Without a cluster no " +
        "rollout emits deployment.* events: only test events (Send test event, `hooks test`, POST …/test) " +
        "and replays are delivered",
    );
  }
  const tokenReviewer =
    kubeConfig && config.tokenAuth.enabled
      ? // Loaded only with a cluster, like the operator (client-node is most of an idle replica's memory).
        (await import("../kube-auth/reviewer.js")).createKubernetesTokenReviewer(
          kubeConfig,
          config.tokenAuth,
          logger,
        )
      : undefined;
  if (tokenReviewer) {
    logger.info(
      { audience: tokenReviewer.audience },
      "Kubernetes token authentication on: /api accepts tokens",
    );
  } else {
    logger.info(
      { reason: kubeConfig ? "KUBERNETES_TOKEN_AUTH=false" : "no Kubernetes cluster" },
      "Kubernetes token authentication off: /api accepts API keys only",
    );
  }
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
  const { bounds } = config.http;
  const server = createServer(boundedServerOptions(bounds), app);
  boundConnections(server, bounds, logger);
  const address = await listen(server, config.http.host, config.http.port);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
  // Where it listens, and addresses to open: on 0.0.0.0 that is loopback, not "0.0.0.0".
  const listenOn = `${host}:${address.port}`;
  const dashboard = !config.dashboard.enabled
    ? "dashboard off (DASHBOARD_ENABLED=false)"
    : findDashboardDir()
      ? `dashboard ${url}/`
      : "dashboard not built (npm run build)";
  logger.info(
    { listen: listenOn, url, version, database: embedded ? "embedded" : "DATABASE_URL" },
    `webhook-operator ${version} listening on ${host === "0.0.0.0" || host === "[::]" ? `all interfaces, port ${address.port}` : listenOn}: ${dashboard}, API description ${url}/api/docs`,
  );

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
      await engine.stop(config.shutdownTimeoutMs);
      await Promise.all([pool.end(), readyPool.end(), leaderPool?.end(), closeTemplateThreads()]);
      await embedded?.stop();
      logger.info("stopped");
    },
  };
}

/**
 * The migrations on a connection of their own, named for them, with the longer statement and lock
 * timeout they may need (a large table rewritten or indexed, another replica's migration waited for).
 */
async function migrateWithin(databaseUrl: string, database: Config["database"], logger: Logger) {
  const { timeouts, migrationStatementTimeoutMs: longer } = database;
  const pool = createPool(
    databaseUrl,
    1,
    {},
    {
      role: "migrations",
      timeouts: { ...timeouts, statementTimeoutMs: longer, lockTimeoutMs: longer },
      logger,
    },
  );
  try {
    return await migrate(pool);
  } finally {
    await pool.end();
  }
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
