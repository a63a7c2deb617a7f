import type { KubernetesListObject, KubernetesObject, V1Secret } from "@kubernetes/client-node";
import type { Pool } from "../../db/pool.js";
import type { DestinationPolicy } from "../../delivery-engine/destination-policy.js";
import { signingKeyFromSecretValue } from "../../formats/signing-key.js";
import { checkTemplate } from "../../formats/template.js";
import type { Logger } from "../../logger.js";
import type { ProjectRow } from "../../projects/store.js";
import { goneReasonStart } from "../../webhooks/auto-disable.js";
import { destinationRefusal } from "../../webhooks/destination-check.js";
import { pauseOwnedWebhook, upsertOwnedWebhook } from "../../webhooks/owned-store.js";
import { syncRateLimit } from "../../webhooks/rate-limit.js";
import { removeOwnedWebhook, removeWebhooksOfMissingOwners } from "../../webhooks/service.js";
import type { WebhookSecrets } from "../../webhooks/store.js";
import { setCondition } from "../api/conditions.js";
import { validateWebhookSpec } from "../api/validate-spec.js";
import {
  finalizer,
  group,
  plural,
  version,
  type WebhookResource,
  type WebhookSpec,
  type WebhookStatus,
} from "../api/webhook-v1alpha1.js";
import { listenForDisabledWebhooks } from "../disabled-webhooks.js";
import type { KubeGateway } from "../kube-gateway.js";
import { type Controller, type ControllerManager, objectKey, queueSettings } from "../manager.js";
import type { NamespaceProjects } from "../namespace-projects.js";
import { referencedSecrets } from "../referenced-secrets.js";
import { type ReconcileResult, WorkQueue } from "../work-queue.js";
import { ConfigurationProblem } from "./configuration-problem.js";
import type { NamespaceController } from "./namespace-controller.js";
import { measuredReconcile } from "./reconcile-metrics.js";
import { optedInSecrets, requireOptIn, type SecretsWithoutLabel } from "./secret-opt-in.js";
import { type SecretGetter, secretBytes } from "./secret-values.js";
import { fieldSecretNames, webhookFieldsFromSpec } from "./webhook-fields.js";
import { withDeliveryHealth } from "./webhook-health.js";
import { publishStatus } from "./webhook-status.js";

export interface WebhookControllerDeps {
  pool: Pool;
  /** The secret keys a Webhook's secret is sealed with. */
  secrets: WebhookSecrets;
  /** Where deliveries may go: a spec.url it refuses is Ready=False, as the API answers 403. */
  destinationPolicy: DestinationPolicy;
  kube: KubeGateway;
  getWebhook(namespace: string, name: string): WebhookResource | undefined;
  /** The Secret a Webhook ("namespace/name") references, read and then watched by name. */
  readSecret(webhook: string, namespace: string, name: string): Promise<V1Secret | undefined>;
  /** The Webhook now references only these Secrets of its namespace. */
  retainSecrets(webhook: string, namespace: string, names: string[]): void;
  /** The Webhook references no Secret (any more). */
  releaseSecret(webhook: string): void;
  /** Secrets used without the opt-in label (WEBHOOK_SECRETS_WITHOUT_LABEL); labelled ones always. */
  secretsWithoutLabel: SecretsWithoutLabel;
  namespaces: NamespaceProjects;
  /** The namespace's project row, created on first sight (cached by the operator). */
  projectFor(namespace: string): Promise<ProjectRow>;
  logger: Logger;
}

export const ownerOf = (resource: { metadata: { namespace: string; name: string } }) =>
  `${resource.metadata.namespace}/${resource.metadata.name}`;

/** The signing key from `spec.secretRef`, or null when the resource asks for unsigned deliveries. */
async function signingKey(spec: WebhookSpec, namespace: string, getSecret: SecretGetter) {
  if (!spec.secretRef) return null;
  return signingKeyFromSecretValue(await secretBytes(getSecret, namespace, spec.secretRef));
}

/**
 * One reconcile of a Webhook resource, in flux's shape: fetch (gone → nothing to do), finalizer,
 * reconcile into the service's webhooks table, patch status once at the end, record metrics, emit a
 * Kubernetes Event when readiness changes. Configuration problems end in Ready=False without a
 * requeue; anything else throws and is requeued with backoff by the work queue.
 */
export async function reconcileWebhook(deps: WebhookControllerDeps, key: string): Promise<ReconcileResult> {
  const [namespace = "", name = ""] = key.split("/");
  const resource = deps.getWebhook(namespace, name);
  if (!resource) return undefined;
  return measuredReconcile("webhook", async (report) => {
    if (resource.metadata.deletionTimestamp) {
      deps.releaseSecret(ownerOf(resource));
      if (resource.metadata.finalizers?.includes(finalizer)) {
        await removeOwnedWebhook(deps.pool, ownerOf(resource));
        await deps.kube.setFinalizers(
          resource,
          resource.metadata.finalizers.filter((f) => f !== finalizer),
        );
      }
      return undefined;
    }
    if (!resource.metadata.finalizers?.includes(finalizer)) {
      await deps.kube.setFinalizers(resource, [...(resource.metadata.finalizers ?? []), finalizer]);
    }

    const status: WebhookStatus = { ...resource.status, observedGeneration: resource.metadata.generation };
    try {
      const validated = validateWebhookSpec(resource.spec);
      if ("problems" in validated)
        throw new ConfigurationProblem("InvalidSpec", validated.problems.join("; "));
      if (!deps.namespaces.isSelected(namespace)) {
        throw new ConfigurationProblem(
          "NamespaceNotSelected",
          `Namespace ${namespace} is not selected by the operator's namespace selector, so it is not a project.`,
        );
      }
      const spec = validated.spec;
      const owner = ownerOf(resource);
      // Secrets the spec no longer names are let go; each one read below is watched from then on,
      // present or not yet, so its creation or change reconciles this resource again.
      const secretNames = [...(spec.secretRef ? [spec.secretRef.name] : []), ...fieldSecretNames(spec)];
      deps.retainSecrets(owner, namespace, secretNames);
      // Every Secret the spec names (signing key, URL, header values) must have opted in: all refused
      // ones named at once, and each read of a value guarded again.
      const readSecret: SecretGetter = (secretName) => deps.readSecret(owner, namespace, secretName);
      await requireOptIn(readSecret, namespace, secretNames, deps.secretsWithoutLabel);
      const getSecret = optedInSecrets(readSecret, namespace, deps.secretsWithoutLabel);
      const fields = await webhookFieldsFromSpec(spec, namespace, getSecret, checkTemplate);
      const refused = await destinationRefusal(fields.url, deps.destinationPolicy);
      if (refused !== null) {
        throw new ConfigurationProblem(
          "DestinationRefused",
          `${spec.urlSecretRef ? "The URL in spec.urlSecretRef" : "spec.url"} is refused as a delivery destination: ${refused}; every delivery would fail.`,
        );
      }
      const secret = await signingKey(spec, namespace, getSecret);
      const project = await deps.projectFor(namespace);
      const webhook = await upsertOwnedWebhook(deps.pool, deps.secrets, {
        ...fields,
        projectId: project.id,
        events: [...new Set(spec.events)],
        enabled: spec.enabled,
        secret,
        owner,
        generation: resource.metadata.generation,
        policies: {
          retryMaxAttempts: spec.retryPolicy?.maxAttempts ?? null,
          autoDisable: spec.autoDisable ?? null,
        },
      });
      await syncRateLimit(deps.pool, webhook, spec.rateLimit);
      Object.assign(status, await withDeliveryHealth(deps.pool, webhook.id, resource, status, new Date()), {
        webhookId: webhook.id,
        projectId: project.id,
        hasSecret: secret !== null,
      });
      status.conditions = setCondition(
        status.conditions,
        webhook.disabled_reason !== null
          ? {
              type: "Ready",
              status: "False",
              reason: webhook.disabled_reason.startsWith(goneReasonStart) ? "ReceiverGone" : "AutoDisabled",
              message: `${webhook.disabled_reason} (webhook ${webhook.id} of project ${project.id}). Any change to this resource's spec enables it again.`,
              observedGeneration: resource.metadata.generation,
            }
          : {
              type: "Ready",
              status: "True",
              reason: "Reconciled",
              message: `Delivering ${spec.enabled ? "" : "nothing (disabled) "}as webhook ${webhook.id} of project ${project.id}.`,
              observedGeneration: resource.metadata.generation,
            },
      );
    } catch (error) {
      if (!(error instanceof ConfigurationProblem)) throw error;
      report("config_error");
      // A webhook reconciled before keeps its row, paused: no new event goes out signed with a key
      // that was removed, or unsigned where a signature was asked for.
      const paused = await pauseOwnedWebhook(deps.pool, ownerOf(resource));
      if (paused) status.hasSecret = paused.secret !== null;
      status.conditions = setCondition(resource.status?.conditions, {
        type: "Ready",
        status: "False",
        reason: error.reason,
        message: paused ? `${error.message} Deliveries are paused until this is fixed.` : error.message,
        observedGeneration: resource.metadata.generation,
      });
    }
    await publishStatus(deps, resource, status);
    return undefined;
  });
}

/**
 * The Webhook controller's watches, beside its reconcile (flux's SetupWithManager): Webhook resources,
 * the Secrets they reference, namespace changes, a periodic refresh of every status (it carries the last
 * delivery) and, at once, the webhooks a delivery worker disabled automatically.
 */
export function setupWebhookController(
  manager: ControllerManager,
  deps: { namespaces: NamespaceController } & Pick<WebhookControllerDeps, "secrets" | "destinationPolicy">,
): Controller {
  const { pool, customObjects, logger } = manager;
  // Custom objects arrive as plain JSON (timestamps stay strings), hence the WebhookResource casts.
  const webhooks = manager.informer<KubernetesObject>(
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

  // Resources deleted while no leader ran, or whose finalizer was removed by hand: after a complete list.
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

  // Declared before the queue that reads it; its onChange only runs once the queue exists.
  const secrets = referencedSecrets({
    kubeConfig: manager.kubeConfig,
    core: manager.core,
    onChange: (_namespace, _name, users) => {
      for (const user of users) queue.add(user);
    },
    logger,
  });
  const queue = new WorkQueue(
    (key) =>
      reconcileWebhook(
        {
          pool,
          secrets: deps.secrets,
          destinationPolicy: deps.destinationPolicy,
          kube: manager.kube,
          getWebhook: (ns, name) => webhooks.informer.get(name, ns) as unknown as WebhookResource | undefined,
          readSecret: (webhook, ns, name) => secrets.read(webhook, ns, name),
          retainSecrets: (webhook, ns, names) => secrets.retain(webhook, ns, names),
          releaseSecret: (webhook) => secrets.release(webhook),
          secretsWithoutLabel: manager.config.secretsWithoutLabel,
          namespaces: deps.namespaces.selection,
          projectFor: deps.namespaces.projectFor,
          logger,
        },
        key,
      ),
    { ...queueSettings, logger },
  );
  const enqueue = (resource: { metadata?: { namespace?: string; name?: string } }) =>
    queue.add(objectKey(resource));
  deps.namespaces.onChange((namespace) => {
    for (const resource of webhookResources(namespace)) enqueue(resource);
  });
  webhooks.informer.on("add", enqueue);
  webhooks.informer.on("update", enqueue);
  webhooks.informer.on("delete", (resource) => {
    // Normally the finalizer has removed the row already; this covers a finalizer removed by hand.
    void removeOwnedWebhook(pool, ownerOf(resource as unknown as WebhookResource)).catch(() => {});
  });

  let resync: NodeJS.Timeout | undefined;
  let disabledListener: { stop(): Promise<void> } | undefined;
  return {
    async start() {
      await webhooks.start();
      resync = setInterval(() => {
        for (const resource of webhookResources()) enqueue(resource);
      }, manager.config.webhookResyncIntervalMs);
      resync.unref();
      // A webhook disabled automatically: its resource's status and Event now, not at the next resync.
      disabledListener = listenForDisabledWebhooks(
        pool,
        (ids) => {
          for (const resource of webhookResources()) {
            const webhookId = resource.status?.webhookId;
            if (webhookId !== undefined && ids.includes(webhookId)) enqueue(resource);
          }
        },
        logger,
      );
    },
    async stop() {
      clearInterval(resync);
      await disabledListener?.stop();
      await webhooks.stop();
      secrets.stop();
      await queue.stop();
    },
    idle: () => queue.idle(),
  };
}
