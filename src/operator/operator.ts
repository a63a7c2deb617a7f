import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  NetworkingV1Api,
} from "@kubernetes/client-node";
import type { Pool } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import type { EventHandOver } from "../delivery-engine/engine.js";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import type { WebhookSecrets } from "../webhooks/store.js";
import { setupNamespaceController } from "./controllers/namespace-controller.js";
import { setupRolloutController } from "./controllers/rollout-controller.js";
import { setupWebhookController } from "./controllers/webhook-controller.js";
import { setupWorkloadRollouts } from "./controllers/workload-rollouts.js";
import { shareConnections } from "./kube-connections.js";
import { kubeGateway } from "./kube-gateway.js";
import { LeaderElector } from "./leader-election.js";
import { type Controller, controllerManager, type OperatorConfig } from "./manager.js";
import { PodReads } from "./rollouts/pod-reads.js";
import { RolloutDiagnosis } from "./rollouts/rollout-diagnosis.js";
import { routingCaches } from "./rollouts/routing-caches.js";

export interface RunningOperator {
  isLeader(): boolean;
  /** Resolves when the controllers have nothing queued (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The controller role: leader election on a Lease; while leading, the controllers (namespaces →
 * projects, Webhook resources, rollouts of each watched workload kind), each set up with its own informers and work queue
 * (flux's main.go). Losing the lease stops them at once; API and delivery workers are not affected.
 */
export function startOperator(options: {
  kubeConfig: KubeConfig;
  pool: Pool;
  /** The delivery destination policy, judged on each Webhook's spec.url (webhook-controller.ts). */
  destinationPolicy: DestinationPolicy;
  /** The secret keys a Webhook's secret is sealed with. */
  secrets: WebhookSecrets;
  config: OperatorConfig;
  logger: Logger;
  /** This replica's delivery engine: the deliveries of recorded events are handed to its worker. */
  handOver?: EventHandOver;
}): RunningOperator {
  const { pool, config } = options;
  const kubeConfig = shareConnections(options.kubeConfig);
  const logger = options.logger.child({ component: "operator" });
  if (config.secretsWithoutLabel.includes("*")) {
    logger.warn(
      "WEBHOOK_SECRETS_WITHOUT_LABEL is *: Webhook resources may use every Secret of their namespace, labelled or not, so whoever may create a Webhook can send any of them to a receiver of their choice. Label the Secrets Webhooks use (webhook-operator.io/allow-webhooks=true) and remove this setting.",
    );
  }
  // Unique per instance, even for two instances in one process (tests): a shared identity would let
  // both believe they hold the lease.
  const identity = config.identity ?? `${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  const manager = controllerManager({
    pool,
    kubeConfig,
    core,
    apps: kubeConfig.makeApiClient(AppsV1Api),
    customObjects,
    networking: kubeConfig.makeApiClient(NetworkingV1Api),
    kube: kubeGateway({ core, customObjects }, identity),
    config,
    logger,
    handOver: options.handOver,
  });

  let controllers: Controller | undefined;
  let switching = Promise.resolve();
  const elector = new LeaderElector({
    api: kubeConfig.makeApiClient(CoordinationV1Api),
    namespace: config.leaseNamespace,
    name: config.leaseName,
    identity,
    leaseDurationMs: config.leaseDurationMs,
    retryPeriodMs: config.leaderRetryPeriodMs,
    logger,
    onStartedLeading: () => {
      metrics.leader.set(1);
      switching = switching.then(async () => {
        controllers = createControllers();
        await controllers
          .start()
          .catch((error: unknown) => logger.error({ err: error }, "starting controllers failed"));
      });
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      switching = switching.then(async () => {
        await controllers?.stop();
        controllers = undefined;
      });
    },
  });

  /** The controllers of one leadership term, each set up with its own watches (controllers/). */
  function createControllers(): Controller {
    const namespaces = setupNamespaceController(manager);
    const webhooks = setupWebhookController(manager, {
      namespaces,
      secrets: options.secrets,
      destinationPolicy: options.destinationPolicy,
    });
    // What routes to a workload's pods, for the URL of rollouts without a url annotation: one set of
    // caches for every kind.
    const routing = routingCaches({
      informer: manager.informer,
      core: manager.core,
      networking: manager.networking,
      customObjects: manager.customObjects,
      relistIntervalMs: config.relistIntervalMs,
      logger,
    });
    // What stalled rollouts' pods report, one for every kind: its reads say once what RBAC refuses.
    const diagnosis = new RolloutDiagnosis(new PodReads(manager.core, logger), config.diagnosis);
    const rolloutDeps = { namespaces, routing: routing.routing, diagnosis };
    const rollouts = [
      ...(config.workloadKinds.includes("Deployment") ? [setupRolloutController(manager, rolloutDeps)] : []),
      setupWorkloadRollouts(manager, rolloutDeps),
    ];
    return {
      async start() {
        // Namespaces first: every controller's reconciles read them from the cache; routing before the
        // rollout controllers, whose reconciles read rollout URLs from its caches.
        await namespaces.start();
        await Promise.all([
          webhooks.start(),
          routing.start().then(() => Promise.all(rollouts.map((rollout) => rollout.start()))),
        ]);
        logger.info("controllers started");
      },
      async stop() {
        await Promise.all([
          webhooks.stop(),
          ...rollouts.map((rollout) => rollout.stop()),
          routing.stop(),
          namespaces.stop(),
        ]);
        logger.info("controllers stopped");
      },
      async idle() {
        await Promise.all([webhooks.idle(), ...rollouts.map((rollout) => rollout.idle())]);
      },
    };
  }

  elector.start();
  return {
    isLeader: () => elector.isLeader,
    async idle() {
      await switching;
      await controllers?.idle();
    },
    async stop() {
      await elector.stop();
      await switching;
    },
  };
}
