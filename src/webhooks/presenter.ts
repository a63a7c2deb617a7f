import { iso } from "../http/schemas.js";
import { filtersJson } from "./filter-schemas.js";
import { defaultTemplateContentType } from "./format-fields.js";
import { paceJson } from "./rate-limit.js";
import type { WebhookRow } from "./store.js";
import { shownUrl } from "./url-secret.js";

/** A webhook as the API shows it (webhookSchema): never its secret, only whether it has one;
 * never its custom headers' values, only their names. */
export function toWebhookJson(row: WebhookRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    url: shownUrl(row),
    events: row.events,
    enabled: row.enabled,
    has_secret: row.secret !== null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    managed_by: managedBy(row.owner),
    retry_policy: row.retry_max_attempts === null ? null : { max_attempts: row.retry_max_attempts },
    auto_disable:
      row.auto_disable_after_failures === null
        ? null
        : {
            after_failures: row.auto_disable_after_failures,
            min_duration_seconds: row.auto_disable_min_seconds ?? 0,
          },
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at === null ? null : iso(row.disabled_at),
    format: row.format,
    cloudevents_mode: row.cloudevents_mode,
    template: row.template,
    template_content_type: row.template_content_type ?? defaultTemplateContentType,
    signature_scheme: row.signature_scheme,
    header_names: row.header_names,
    // Only when set: a webhook without filters answers exactly as before filters existed.
    ...(row.filters === null ? {} : { filters: filtersJson(row.filters) }),
    ...paceJson(row),
    // Only when set: a webhook whose URL is not a secret answers exactly as before.
    ...(row.url_secret ? { url_secret: true as const } : {}),
    // Only when set: a webhook without rollout details answers exactly as before.
    ...(row.rollout_details ? { rollout_details: true as const } : {}),
  };
}

/** The owner column holds "namespace/name" of the Webhook resource (namespaces hold no slash). */
function managedBy(owner: string | null) {
  if (owner === null) return null;
  const slash = owner.indexOf("/");
  return { kind: "Webhook" as const, namespace: owner.slice(0, slash), name: owner.slice(slash + 1) };
}
