import type { Server } from "node:https";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { Pool } from "../db/pool.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import type { Logger } from "../logger.js";
import { createAccessDecider } from "./authorizer.js";
import { deliveriesResource } from "./deliveries-resource.js";
import { readFrontProxySettings } from "./front-proxy.js";
import { replayCreator } from "./replays.js";
import { groupVersion } from "./resources.js";
import { rolloutsResource } from "./rollouts-resource.js";
import { createAggregatedApiServer } from "./server.js";

export interface AggregatedApiSettings {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** How long a SubjectAccessReview's answer is reused, and how many are kept. */
  reviewCache: { ttlMs: number; size: number };
}

export interface RunningAggregatedApi {
  port: number;
  close(): Promise<void>;
}

/**
 * The aggregated API (`deliveries.webhook-operator.io/v1alpha1`), served over HTTPS to the API server's
 * aggregation layer, which an APIService points here. Started only with a cluster and a port; its
 * front-proxy settings are read once from the API server's ConfigMap (a failure stops start-up: a
 * server that could authenticate nobody is a misconfiguration to see at once).
 */
export async function startAggregatedApi(
  parts: { kubeConfig: KubeConfig; pool: Pool; engine: DeliveryEngine; logger: Logger },
  settings: AggregatedApiSettings,
): Promise<RunningAggregatedApi> {
  const { kubeConfig, pool, engine, logger } = parts;
  const frontProxy = await readFrontProxySettings(kubeConfig.makeApiClient(CoreV1Api));
  const server: Server = createAggregatedApiServer(
    {
      frontProxy,
      access: createAccessDecider(kubeConfig, settings.reviewCache, logger),
      deliveries: deliveriesResource(pool),
      rollouts: rolloutsResource(pool),
      replays: replayCreator(pool, engine),
      logger,
    },
    settings,
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  logger.info(
    { port, groupVersion, allowedNames: frontProxy.allowedNames },
    "aggregated API listening: kubectl get deliveries, rollouts; kubectl create deliveryreplay",
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Watches stay open until their clients go: end them.
        server.closeAllConnections();
      }),
  };
}
