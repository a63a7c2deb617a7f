import type { Logger } from "../../logger.js";
import { findCondition } from "../api/conditions.js";
import { healthyCondition } from "../api/delivery-health.js";
import type { WebhookResource, WebhookStatus } from "../api/webhook-v1alpha1.js";
import type { KubeGateway } from "../kube-gateway.js";
import type { NamespaceProjects } from "../namespace-projects.js";

/**
 * The status as JSON with keys sorted and null fields left out: the status is written as a JSON merge
 * patch, where null removes a field, so a null in the new status equals an absent one in the old.
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner)
            .filter(([, field]) => field !== null)
            .sort(([a], [b]) => a.localeCompare(b)),
        )
      : inner,
  );
}

/** The conditions whose changes are recorded as Kubernetes Events, which `kubectl describe` lists. */
const eventedConditions = ["Ready", healthyCondition];

/**
 * Patches the status once, only when it changed, and records a Kubernetes Event when readiness or
 * health changed (flux's reconcile shape: the status is written once at the end). A condition that
 * becomes Unknown (health before any delivery) is not worth an Event.
 */
export async function publishStatus(
  deps: { kube: KubeGateway; namespaces: NamespaceProjects; logger: Logger },
  resource: WebhookResource,
  status: WebhookStatus,
) {
  // Writing an unchanged status would only wake every watcher; compare independent of key order.
  if (canonicalJson(resource.status ?? {}) !== canonicalJson(status))
    await deps.kube.patchWebhookStatus(resource, status);
  // No Event in a namespace being deleted: Kubernetes refuses to create it (403), and nobody will read it.
  if (deps.namespaces.isTerminating(resource.metadata.namespace)) return;
  for (const type of eventedConditions) {
    const before = findCondition(resource.status?.conditions, type);
    const after = findCondition(status.conditions, type);
    if (!after || after.status === "Unknown") continue;
    if (before?.status === after.status && before?.reason === after.reason) continue;
    const eventType = after.status === "True" ? "Normal" : "Warning";
    await deps.kube.recordEvent(resource, eventType, after.reason, after.message).catch((error: unknown) => {
      deps.logger.warn({ err: error }, "recording a Kubernetes Event failed");
    });
  }
}
