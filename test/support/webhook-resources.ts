import type { CoreV1Event } from "@kubernetes/client-node";
import type { WebhookResource } from "../../src/operator/api/webhook-v1alpha1.js";
import { allowWebhooksLabel } from "../../src/operator/controllers/secret-opt-in.js";
import type { Cluster } from "./cluster.js";
import { waitUntil } from "./wait.js";

// Webhook resources on the real cluster, read and written as a user's kubectl would.

/** A Secret's labels that let the Webhooks of its namespace use it (controllers/secret-opt-in.ts). */
export const optInLabels = { [allowWebhooksLabel]: "true" };

const coordinates = { group: "webhook-operator.io", version: "v1alpha1", plural: "webhooks" };

/** How long a cluster test waits for the operator to act: generous, for a loaded 2-core machine. */
export const clusterPatience = 60_000;

export function createWebhook(
  cluster: Cluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<WebhookResource> {
  return cluster.customObjects.createNamespacedCustomObject({
    ...coordinates,
    namespace,
    body: {
      apiVersion: "webhook-operator.io/v1alpha1",
      kind: "Webhook",
      metadata: { name, namespace },
      spec,
    },
  }) as Promise<WebhookResource>;
}

export async function getWebhook(
  cluster: Cluster,
  namespace: string,
  name: string,
): Promise<WebhookResource | undefined> {
  try {
    return (await cluster.customObjects.getNamespacedCustomObject({
      ...coordinates,
      namespace,
      name,
    })) as WebhookResource;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** A JSON merge patch of a Webhook's spec (or metadata), as `kubectl patch --type merge` sends. */
export async function patchWebhook(
  cluster: Cluster,
  namespace: string,
  name: string,
  patch: Record<string, unknown>,
): Promise<void> {
  await cluster.kubectl([
    "-n",
    namespace,
    "patch",
    "webhooks.webhook-operator.io",
    name,
    "--type",
    "merge",
    "-p",
    JSON.stringify(patch),
  ]);
}

export const readyOf = (resource: WebhookResource | undefined) =>
  resource?.status?.conditions?.find((condition) => condition.type === "Ready");

/** Waits until the Webhook's Ready condition has `status` for the given generation. */
export function waitForReady(
  cluster: Cluster,
  namespace: string,
  name: string,
  status: "True" | "False",
  generation = 1,
): Promise<WebhookResource> {
  return waitUntil(
    `Webhook ${namespace}/${name} to be Ready=${status} at generation ${generation}`,
    async (saw) => {
      const resource = await getWebhook(cluster, namespace, name);
      saw(resource?.status);
      return readyOf(resource)?.status === status && resource?.status?.observedGeneration === generation
        ? resource
        : undefined;
    },
    { timeoutMs: clusterPatience },
  );
}

export async function eventsOf(cluster: Cluster, namespace: string, name: string): Promise<CoreV1Event[]> {
  const { items } = await cluster.core.listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return items;
}
