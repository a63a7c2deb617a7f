import {
  type CoreV1Api,
  type CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { group, plural, version, type WebhookResource, type WebhookStatus } from "./api/webhook-v1alpha1.js";

/** The writes the controllers make to the Kubernetes API, in one place. */
export interface KubeGateway {
  setFinalizers(resource: WebhookResource, finalizers: string[]): Promise<void>;
  patchWebhookStatus(resource: WebhookResource, status: WebhookStatus): Promise<void>;
  recordEvent(
    resource: WebhookResource,
    type: "Normal" | "Warning",
    reason: string,
    message: string,
  ): Promise<void>;
}

// client-node sends JSON Patch by default; these writes are JSON merge patches.
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export function kubeGateway(
  apis: { core: CoreV1Api; customObjects: CustomObjectsApi },
  reporter: string,
): KubeGateway {
  const target = (resource: WebhookResource) => ({
    group,
    version,
    plural,
    namespace: resource.metadata.namespace,
    name: resource.metadata.name,
  });
  return {
    async setFinalizers(resource, finalizers) {
      // resourceVersion makes this a compare-and-swap: a stale view answers 409 and is retried.
      await apis.customObjects.patchNamespacedCustomObject(
        {
          ...target(resource),
          body: { metadata: { finalizers, resourceVersion: resource.metadata.resourceVersion } },
        },
        mergePatch,
      );
    },
    async patchWebhookStatus(resource, status) {
      await apis.customObjects.patchNamespacedCustomObjectStatus(
        { ...target(resource), body: { status } },
        mergePatch,
      );
    },
    async recordEvent(resource, type, reason, message) {
      const now = new Date();
      await apis.core.createNamespacedEvent({
        namespace: resource.metadata.namespace,
        body: {
          metadata: { generateName: `${resource.metadata.name}.`, namespace: resource.metadata.namespace },
          involvedObject: {
            apiVersion: resource.apiVersion,
            kind: resource.kind,
            name: resource.metadata.name,
            namespace: resource.metadata.namespace,
            uid: resource.metadata.uid,
            resourceVersion: resource.metadata.resourceVersion,
          },
          type,
          reason,
          message,
          source: { component: "webhook-operator" },
          reportingComponent: "webhook-operator",
          reportingInstance: reporter,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },
  };
}
