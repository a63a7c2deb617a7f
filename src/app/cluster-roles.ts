import type { KubeConfig } from "@kubernetes/client-node";
import { createPool, type Pool } from "../db/pool.js";
import { destinationPolicyOf } from "../delivery-engine/destination-policy.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import type { RunningAggregatedApi } from "../kube-api/start.js";
import type { KubernetesTokenReviewer } from "../kube-auth/reviewer.js";
import type { Logger } from "../logger.js";
import { loadKubeConfig, operatorNamespace } from "../operator/kube-config.js";
import type { RunningOperator } from "../operator/operator.js";
import type { SecretBox } from "../secrets/secret-box.js";
import type { Config } from "./config.js";

// What a replica does only where a Kubernetes cluster is (service.ts): the controllers, with a pool of
// their own, and Kubernetes token authentication on /api. Without a cluster neither starts, and each
// says so once at start-up.

export interface ClusterRoles {
  /** The controllers' pool, opened only with a cluster. */
  leaderPool: Pool | undefined;
  operator: RunningOperator | undefined;
  tokenReviewer: KubernetesTokenReviewer | undefined;
  /** `kubectl get deliveries`: only with a cluster and AGGREGATED_API_PORT. */
  aggregatedApi: RunningAggregatedApi | undefined;
}

export async function startClusterRoles(
  config: Config,
  /** service.ts's ServiceOptions: a cluster given (or undefined: none), else loaded from the settings. */
  options: { kubeConfig?: KubeConfig | undefined },
  service: { databaseUrl: string; engine: DeliveryEngine; box: SecretBox; pool: Pool },
  logger: Logger,
): Promise<ClusterRoles> {
  const { databaseUrl, engine, box } = service;
  const { timeouts } = config.database;
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
  const { port, certFile, keyFile } = config.aggregatedApi;
  const aggregatedApi =
    kubeConfig && port !== 0 && certFile && keyFile
      ? await (await import("../kube-api/start.js")).startAggregatedApi(
          { kubeConfig, pool: service.pool, engine, logger },
          {
            host: config.http.host,
            port,
            certFile,
            keyFile,
            reviewCache: { ttlMs: config.tokenAuth.cacheTtlMs, size: config.tokenAuth.cacheSize },
          },
        )
      : undefined;
  if (port !== 0 && !kubeConfig) {
    logger.info("aggregated API off: no Kubernetes cluster (AGGREGATED_API_PORT is ignored)");
  }
  return { leaderPool, operator, tokenReviewer, aggregatedApi };
}
