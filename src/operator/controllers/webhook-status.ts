import type { Logger } from "../../logger.js";
import { findCondition } from "../api/conditions.js";
import type { WebhookResource, WebhookStatus } from "../api/webhook-v1alpha1.js";
import type { KubeGateway } from "../kube-gateway.js";
import type { NamespaceProjects } from "../namespace-projects.js";

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}

/**
 * Patches the status once, only when it changed, and records a Kubernetes Event when readiness changed
 * (flux's reconcile shape: the status is written once at the end).
 */
export async function publishStatus(
  deps: { kube: KubeGateway; namespaces: NamespaceProjects; logger: Logger },
  resource: WebhookResource,
  status: WebhookStatus,
) {
  const before = findCondition(resource.status?.conditions, "Ready");
  const after = findCondition(status.conditions, "Ready");
  // Writing an unchanged status would only wake every watcher; compare independent of key order.
  if (canonicalJson(resource.status ?? {}) !== canonicalJson(status))
    await deps.kube.patchWebhookStatus(resource, status);
  // No Event in a namespace being deleted: Kubernetes refuses to create it (403), and nobody will read it.
  const terminating = deps.namespaces.isTerminating(resource.metadata.namespace);
  if (after && !terminating && (before?.status !== after.status || before?.reason !== after.reason)) {
    const type = after.status === "True" ? "Normal" : "Warning";
    await deps.kube.recordEvent(resource, type, after.reason, after.message).catch((error: unknown) => {
      deps.logger.warn({ err: error }, "recording a Kubernetes Event failed");
    });
  }
}
