import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  NetworkingV1Api,
  type V1Deployment,
  type V1Namespace,
} from "@kubernetes/client-node";
import type { Pool } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import {
  applyNamespaceSelection,
  deleteNamespaceProject,
  deleteProjectsOfMissingNamespaces,
  ensureNamespaceProject,
  type ProjectRow,
  withdrawNamespaceProject,
} from "../projects/store.js";
import { removeOwnedWebhook, removeWebhooksOfMissingOwners } from "../webhooks/service.js";
import type { WebhookSecrets } from "../webhooks/store.js";
import { group, plural, version, type WebhookResource } from "./api/webhook-v1alpha1.js";
import { reconcileDeployment } from "./controllers/rollout-controller.js";
import { ownerOf, reconcileWebhook } from "./controllers/webhook-controller.js";
import { listenForDisabledWebhooks } from "./disabled-webhooks.js";
import { type ResilientInformer, resilientInformer } from "./informer.js";
import { shareConnections } from "./kube-connections.js";
import { kubeGateway } from "./kube-gateway.js";
import { LeaderElector } from "./leader-election.js";
import { namespaceProjects } from "./namespace-projects.js";
import { type ReferencedSecrets, referencedSecrets } from "./referenced-secrets.js";
import { cancelRolloutsOfDeletedDeployments } from "./rollouts/record-rollout.js";
import { replicaSetCreatedAt } from "./rollouts/rollout-times.js";
import { routingCaches } from "./rollouts/routing-caches.js";
import { WorkQueue } from "./work-queue.js";

export interface OperatorConfig {
  namespaceSelector: string;
  leaseNamespace: string;
  leaseName: string;
  identity: string | undefined;
  leaseDurationMs: number;
  leaderRetryPeriodMs: number;
  relistIntervalMs: number;
  webhookResyncIntervalMs: number;
}

export interface RunningOperator {
  isLeader(): boolean;
  /** Resolves when the controllers have nothing queued (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const key = (object: { metadata?: { namespace?: string; name?: string } }) =>
  `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;

/**
 * The controller role: leader election on a Lease; while leading, informers on Namespaces, Secrets,
 * Webhooks and Deployments feed two work queues (Webhook reconciles, Deployment rollouts). Losing the
 * lease stops the informers and queues at once; API and delivery workers are not affected.
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
}): RunningOperator {
  const { pool, config } = options;
  const kubeConfig = shareConnections(options.kubeConfig);
  const logger = options.logger.child({ component: "operator" });
  // Unique per instance, even for two instances in one process (tests): a shared identity would let
  // both believe they hold the lease.
  const identity = config.identity ?? `${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
  const networking = kubeConfig.makeApiClient(NetworkingV1Api);
  const kube = kubeGateway({ core, customObjects }, identity);

  let controllers: Controllers | undefined;
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

  type Controllers = ReturnType<typeof createControllers>;
  function createControllers() {
    const informer = <T extends KubernetesObject>(
      resource: string,
      path: string,
      list: () => Promise<KubernetesListObject<T>>,
    ): ResilientInformer<T> =>
      resilientInformer<T>({
        kubeConfig,
        path,
        list,
        resource,
        relistIntervalMs: config.relistIntervalMs,
        logger,
      });
    const namespaces: ResilientInformer<V1Namespace> = informer(
      "namespaces",
      "/api/v1/namespaces",
      async () => {
        const list = await core.listNamespace();
        await removeProjectsOfDeletedNamespaces(list.items);
        await withdrawProjectsOfUnselectedNamespaces(list.items);
        return list;
      },
    );
    // Custom objects arrive as plain JSON (timestamps stay strings), hence the WebhookResource casts.
    const webhooks = informer<KubernetesObject>(
      "webhooks",
      `/apis/${group}/${version}/${plural}`,
      async () => {
        const list: KubernetesListObject<KubernetesObject> = await customObjects.listClusterCustomObject({
          group,
          version,
          plural,
        });
        await removeWebhooksOfDeletedResources(list.items as unknown as WebhookResource[]);
        return list;
      },
    );
    const webhookResources = (namespace?: string) =>
      webhooks.informer.list(namespace) as unknown as WebhookResource[];
    const deployments: ResilientInformer<V1Deployment> = informer(
      "deployments",
      "/apis/apps/v1/deployments",
      async () => {
        const list = await apps.listDeploymentForAllNamespaces();
        await cancelRolloutsOfMissingDeployments(list.items);
        return list;
      },
    );

    // What routes to a Deployment's pods, for the URL of rollouts without a url annotation.
    const routing = routingCaches({
      informer,
      core,
      networking,
      customObjects,
      relistIntervalMs: config.relistIntervalMs,
      logger,
    });

    // Here, inside the list function, the list is known to be complete: ListWatch.start() resolves even
    // when its list failed, and an empty cache must never read as "every Webhook was deleted".
    async function removeWebhooksOfDeletedResources(resources: WebhookResource[]) {
      const removed = await removeWebhooksOfMissingOwners(pool, resources.map(ownerOf)).catch(
        (error: unknown) => {
          logger.warn(
            { err: error },
            "removing webhooks of deleted Webhook resources failed; next re-list retries",
          );
          return 0;
        },
      );
      if (removed > 0)
        logger.info({ removed }, "removed the webhooks of Webhook resources that no longer exist");
    }

    // Deployments deleted while no leader ran: their unfinished rollouts are cancelled after each
    // complete list, from inside the list function for the reason given above.
    async function cancelRolloutsOfMissingDeployments(present: V1Deployment[]) {
      const uids = present.flatMap((d) => (d.metadata?.uid ? [d.metadata.uid] : []));
      const cancelled = await cancelRolloutsOfDeletedDeployments(pool, { notInSourceUids: uids }).catch(
        (error: unknown) => {
          logger.warn(
            { err: error },
            "cancelling rollouts of deleted Deployments failed; next re-list retries",
          );
          return 0;
        },
      );
      if (cancelled > 0)
        logger.info({ cancelled }, "cancelled rollouts of Deployments deleted while no leader ran");
    }

    // Namespaces deleted while no leader ran take their projects along, after a complete list.
    async function removeProjectsOfDeletedNamespaces(present: V1Namespace[]) {
      const removed = await deleteProjectsOfMissingNamespaces(
        pool,
        present.map((namespace) => namespace.metadata?.name ?? ""),
      ).catch((error: unknown) => {
        logger.warn({ err: error }, "removing projects of deleted namespaces failed; next re-list retries");
        return [];
      });
      for (const slug of removed) projects.delete(slug);
      if (removed.length > 0)
        logger.info({ projects: removed }, "removed the projects of deleted namespaces");
    }

    // Projects follow the selector both ways, also for a selector or labels changed while no leader ran;
    // each complete list also mends a label change whose own write lost a race with a reconcile.
    async function withdrawProjectsOfUnselectedNamespaces(present: V1Namespace[]) {
      const selected = present.filter((namespace) => selection.matches(namespace));
      const changed = await applyNamespaceSelection(
        pool,
        selected.map((namespace) => namespace.metadata?.name ?? ""),
      ).catch((error: unknown) => {
        logger.warn(
          { err: error },
          "withdrawing projects of unselected namespaces failed; next re-list retries",
        );
        return { withdrawn: [], restored: [] };
      });
      for (const slug of changed.withdrawn) projects.delete(slug);
      if (changed.withdrawn.length + changed.restored.length > 0)
        logger.info(changed, "projects withdrawn and restored to follow the namespace selector");
    }

    const selection = namespaceProjects(config.namespaceSelector, (name) => namespaces.informer.get(name));
    // The project row of each namespace, written once and then read from here: concurrent reconciles of
    // one namespace share the first write, and a namespace change (name/repo annotations) drops the entry.
    const projects = new Map<string, Promise<ProjectRow>>();
    const projectFor = (namespace: string): Promise<ProjectRow> => {
      const cached = projects.get(namespace);
      if (cached) return cached;
      // Checked again here: a reconcile that found the namespace selected before an await must not
      // bring back a project withdrawn meanwhile. It fails, and its retry sees the namespace as it is.
      if (!selection.isSelected(namespace))
        return Promise.reject(new Error(`Namespace ${namespace} is no longer selected.`));
      const project = ensureNamespaceProject(pool, selection.describe(namespace));
      projects.set(namespace, project);
      project.catch(() => {
        if (projects.get(namespace) === project) projects.delete(namespace);
      });
      return project;
    };

    // Declared before the queue that reads it; its onChange only runs once the queue exists.
    const secrets: ReferencedSecrets = referencedSecrets({
      kubeConfig,
      core,
      onChange: (_namespace, _name, users) => {
        for (const user of users) webhookQueue.add(user);
      },
      logger,
    });

    const queueOptions = { concurrency: 8, baseDelayMs: 500, maxDelayMs: 60_000, logger };
    const webhookQueue = new WorkQueue(
      (k) =>
        reconcileWebhook(
          {
            pool,
            secrets: options.secrets,
            destinationPolicy: options.destinationPolicy,
            kube,
            getWebhook: (ns, name) =>
              webhooks.informer.get(name, ns) as unknown as WebhookResource | undefined,
            readSecret: (webhook, ns, name) => secrets.read(webhook, ns, name),
            releaseSecret: (webhook) => secrets.release(webhook),
            namespaces: selection,
            projectFor,
            logger,
          },
          k,
        ),
      queueOptions,
    );
    const recordedRollouts = new Map<string, string>();
    const deploymentQueue = new WorkQueue(
      (k) =>
        reconcileDeployment(
          {
            pool,
            getDeployment: (ns, name) => deployments.informer.get(name, ns),
            isSelected: (ns) => selection.isSelected(ns),
            projectFor,
            rolloutStartedAt: (deployment) => replicaSetCreatedAt(apps, deployment),
            routing: routing.routing,
            logger,
            recorded: recordedRollouts,
          },
          k,
        ),
      queueOptions,
    );
    const enqueueWebhooksOf = (namespace: string) => {
      for (const resource of webhookResources(namespace)) webhookQueue.add(key(resource));
    };

    namespaces.informer.on("delete", (namespace) => {
      const name = namespace.metadata?.name ?? "";
      projects.delete(name);
      deleteNamespaceProject(pool, name).then(
        (removed) => removed && logger.info({ project: name }, "removed the project of a deleted namespace"),
        (error: unknown) =>
          logger.warn({ err: error, namespace: name }, "removing a deleted namespace's project failed"),
      );
    });
    namespaces.informer.on("change", (namespace) => {
      const name = namespace.metadata?.name ?? "";
      projects.delete(name);
      if (selection.isSelected(name)) void projectFor(name).catch(() => {});
      // Still there but no longer selected (a deleted one's project goes in the "delete" handler).
      else if (namespaces.informer.get(name))
        withdrawNamespaceProject(pool, name).then(
          (withdrawn) =>
            withdrawn &&
            logger.info({ project: name }, "withdrew the project of a namespace no longer selected"),
          (error: unknown) =>
            logger.warn(
              { err: error, namespace: name },
              "withdrawing an unselected namespace's project failed",
            ),
        );
      enqueueWebhooksOf(name);
      for (const deployment of deployments.informer.list(name)) deploymentQueue.add(key(deployment));
    });
    webhooks.informer.on("add", (resource) => webhookQueue.add(key(resource)));
    webhooks.informer.on("update", (resource) => webhookQueue.add(key(resource)));
    webhooks.informer.on("delete", (resource) => {
      // Normally the finalizer has removed the row already; this covers a finalizer removed by hand.
      void removeOwnedWebhook(pool, ownerOf(resource as unknown as WebhookResource)).catch(() => {});
    });
    deployments.informer.on("add", (deployment) => deploymentQueue.add(key(deployment)));
    deployments.informer.on("update", (deployment) => deploymentQueue.add(key(deployment)));
    deployments.informer.on("delete", (deployment) => {
      const uid = deployment.metadata?.uid;
      if (uid) {
        recordedRollouts.delete(uid);
        cancelRolloutsOfDeletedDeployments(pool, { sourceUid: uid }).catch((error: unknown) =>
          logger.error(
            { err: error, deployment: key(deployment) },
            "cancelling rollouts of a deleted Deployment failed",
          ),
        );
      }
    });

    let resync: NodeJS.Timeout | undefined;
    let disabledListener: { stop(): Promise<void> } | undefined;
    return {
      webhookQueue,
      deploymentQueue,
      async start() {
        // Namespaces and routing first: reconciles read them from the caches.
        await Promise.all([namespaces.start(), routing.start()]);
        await Promise.all([webhooks.start(), deployments.start()]);
        // Status carries the last delivery: refresh it now and then even when nothing else changes.
        resync = setInterval(() => {
          for (const resource of webhookResources()) webhookQueue.add(key(resource));
        }, config.webhookResyncIntervalMs);
        resync.unref();
        // A webhook disabled automatically: its resource's status and Event now, not at the next resync.
        disabledListener = listenForDisabledWebhooks(
          pool,
          (ids) => {
            for (const resource of webhookResources()) {
              const status = (resource as unknown as WebhookResource).status;
              if (status?.webhookId !== undefined && ids.includes(status.webhookId))
                webhookQueue.add(key(resource));
            }
          },
          logger,
        );
        logger.info("controllers started");
      },
      async stop() {
        clearInterval(resync);
        await disabledListener?.stop();
        await Promise.all([namespaces.stop(), webhooks.stop(), deployments.stop(), routing.stop()]);
        secrets.stop();
        await Promise.all([webhookQueue.stop(), deploymentQueue.stop()]);
        logger.info("controllers stopped");
      },
    };
  }

  elector.start();
  return {
    isLeader: () => elector.isLeader,
    async idle() {
      await switching;
      await Promise.all([controllers?.webhookQueue.idle(), controllers?.deploymentQueue.idle()]);
    },
    async stop() {
      await elector.stop();
      await switching;
    },
  };
}
