import { createHash } from "node:crypto";
import { maskUrlIn } from "../webhooks/url-secret.js";
import type { DeliveryAttemptRow } from "./delivery-store.js";
import { groupVersion } from "./resources.js";

/**
 * A stable uid for a row of ours: the same object always has the same uid (clients and caches key by
 * it), derived from what names it, as Kubernetes would have assigned one when it was made.
 */
export function uidOf(kind: string, id: number): string {
  const hex = createHash("sha256").update(`${groupVersion}/${kind}/${id}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const outcomeOf = (row: DeliveryAttemptRow) =>
  row.success === null ? "pending" : row.success ? "succeeded" : "failed";

/**
 * One attempt as a Kubernetes object. It never changes once recorded, so its resourceVersion is its
 * id. Labels carry what `-l` selects by; error messages are the ones /api shows (no secrets: a
 * tokenised URL is masked before it is stored).
 */
export function deliveryObject(row: DeliveryAttemptRow) {
  const labels: Record<string, string> = {
    webhook: row.webhook,
    event: row.event_type,
    outcome: outcomeOf(row),
  };
  if (row.rollout_id !== null) labels.rollout = String(row.rollout_id);
  return {
    apiVersion: groupVersion,
    kind: "Delivery",
    metadata: {
      name: String(row.id),
      namespace: row.namespace,
      uid: uidOf("Delivery", row.id),
      resourceVersion: String(row.id),
      creationTimestamp: row.created_at.toISOString().replace(/\.\d{3}Z$/, "Z"),
      labels,
    },
    spec: {
      webhook: row.webhook,
      webhookId: row.webhook_id,
      event: row.event_type,
      eventId: row.event_id,
      attempt: row.attempt_number,
      ...(row.rollout_id !== null ? { rollout: String(row.rollout_id) } : {}),
    },
    status: {
      outcome: outcomeOf(row),
      statusCode: row.status_code ?? 0,
      ...(row.error_message ? { message: maskUrlIn(row.error_message, row) } : {}),
      ...(row.delivered_at ? { deliveredAt: row.delivered_at.toISOString() } : {}),
      ...(row.duration_ms !== null ? { durationMs: row.duration_ms } : {}),
    },
  };
}
