import type { BlockList } from "node:net";
import express, { type Express, type RequestHandler, Router } from "express";
import { type ApiKeyChecks, authenticate } from "../api-keys/auth.js";
import { createAuthPacer } from "../api-keys/auth-pacing.js";
import { createKnownDigests } from "../api-keys/known-digests.js";
import { registerApiKeyRoutes } from "../api-keys/routes.js";
import { createVerifiedKeys } from "../api-keys/verified-keys.js";
import type { Pool } from "../db/pool.js";
import { type DatabaseReadiness, databaseReadiness } from "../db/readiness.js";
import { registerDeliveryRoutes } from "../deliveries/routes.js";
import { registerDeliveryStatsRoutes } from "../deliveries/stats-routes.js";
import { registerTestEventRoutes } from "../deliveries/test-event-routes.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { registerDeploymentRoutes } from "../deployments/routes.js";
import { NotFoundError } from "../errors.js";
import { errorHandler } from "../http/error-handler.js";
import { jsonBody } from "../http/json-body.js";
import { createRegistry, generateOpenApiDocument } from "../http/openapi.js";
import { refuseOtherMethods } from "../http/route.js";
import { trustProxyIn } from "../http/trusted-proxies.js";
import type { KubernetesTokenReviewer } from "../kube-auth/reviewer.js";
import type { Logger } from "../logger.js";
import { registerProjectRoutes } from "../projects/routes.js";
import { version } from "../version.js";
import { registerWebhookRoutes } from "../webhooks/routes.js";
import type { WebhookSecrets } from "../webhooks/store.js";
import { defaultReadyTimeoutMs, defaultRetryDelaysMs } from "./config.js";
import { dashboardRoutes } from "./dashboard.js";
import { registerHealthRoutes } from "./health.js";
import { type MetricsEndpointSettings, registerMetricsEndpoint } from "./metrics-endpoint.js";
import { registerServiceInfoRoute } from "./service-info.js";

export const requestBodyLimit = "64kb";

export interface AppDependencies {
  pool: Pool;
  logger: Logger;
  engine: DeliveryEngine;
  /** Reviews Kubernetes tokens presented to /api; absent without a cluster. */
  tokenReviewer?: KubernetesTokenReviewer | undefined;
  /** Serve the web dashboard at / (DASHBOARD_ENABLED). */
  dashboard: boolean;
  destinationPolicy: DestinationPolicy;
  /** WEBHOOKS_PER_PROJECT_LIMIT. */
  webhooksPerProjectLimit: number;
  /** The secret keys webhooks' signing secrets are sealed with. */
  secrets: WebhookSecrets;
  /** Whether the controllers run against a cluster, and the retry waits (GET /api/service-info). */
  kubernetes?: boolean;
  retryDelaysMs?: number[];
  /** METRICS_TOKEN and METRICS_CACHE_MS. */
  metrics?: MetricsEndpointSettings;
  /** AUTH_FAILURES_PER_MINUTE: refused credentials per source before it is paced; unset, no pacing. */
  authFailuresPerMinute?: number;
  /** TRUSTED_PROXIES: peers whose X-Forwarded-For names the client; unset, none. */
  trustedProxies?: BlockList | undefined;
  /** API_KEY_CACHE_TTL_MS; unset, 0 (every request queries the database). */
  apiKeyCacheTtlMs?: number;
  /** /readyz's database check, on a pool of its own (the service's); unset, one on `pool` (tests). */
  databaseReady?: DatabaseReadiness;
}

function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug({ method: req.method, path: req.path, status: res.statusCode, ms }, "request");
    });
    next();
  };
}

export function createApp({
  pool,
  logger,
  engine,
  tokenReviewer,
  dashboard,
  destinationPolicy,
  webhooksPerProjectLimit,
  secrets,
  kubernetes = false,
  retryDelaysMs = defaultRetryDelaysMs,
  metrics = {},
  authFailuresPerMinute,
  trustedProxies,
  apiKeyCacheTtlMs = 0,
  databaseReady = databaseReadiness(pool, defaultReadyTimeoutMs),
}: AppDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  // Never the default `true` (every hop believed): only the configured proxies (trusted-proxies.ts).
  app.set("trust proxy", trustedProxies ? trustProxyIn(trustedProxies) : false);
  app.use(requestLog(logger));
  registerHealthRoutes(app, databaseReady, () => engine.stuckSends());
  const pacer = authFailuresPerMinute ? createAuthPacer(authFailuresPerMinute, logger) : undefined;
  registerMetricsEndpoint(app, pool, { ...metrics, pacer });

  const registry = createRegistry();
  const api = Router();
  const keys: ApiKeyChecks = {
    verified: createVerifiedKeys(pool, apiKeyCacheTtlMs),
    known: createKnownDigests(pool),
  };
  api.use(authenticate(keys, tokenReviewer, pacer));
  api.use(jsonBody(requestBodyLimit));
  registerWebhookRoutes(api, registry, pool, {
    destinationPolicy,
    perProjectLimit: webhooksPerProjectLimit,
    secrets,
  });
  registerTestEventRoutes(api, registry, pool, engine);
  registerDeliveryRoutes(api, registry, pool, engine);
  registerDeliveryStatsRoutes(api, registry, pool);
  registerProjectRoutes(api, registry, pool);
  registerDeploymentRoutes(api, registry, pool);
  registerApiKeyRoutes(api, registry, pool, keys);
  registerServiceInfoRoute(api, registry, { version, kubernetes, retry_delays_ms: retryDelaysMs });
  refuseOtherMethods(api);
  api.use((req) => {
    throw new NotFoundError(`No endpoint ${req.method} /api${req.path}.`);
  });

  // The document is public (it holds no data), built from the same schemas as the routes when first
  // asked for and kept as text: a replica nobody asks does not hold it.
  let openApiDocument: string | undefined;
  app.get("/api/docs", (_req, res) => {
    openApiDocument ??= JSON.stringify(generateOpenApiDocument(registry, version));
    res.type("json").send(openApiDocument);
  });
  app.use("/api", api);
  const dashboardRouter = dashboardRoutes(dashboard, logger);
  if (dashboardRouter) app.use(dashboardRouter);
  app.use((req) => {
    throw new NotFoundError(`No endpoint ${req.method} ${req.path}.`);
  });
  app.use(errorHandler(logger));
  return app;
}
