import type { Queryable } from "../db/pool.js";
import type { WebhookFilters } from "../delivery-engine/event-filters.js";
import type { DeliveryFormat } from "../formats/types.js";
import { sealCustomHeaders } from "./custom-headers.js";
import { filtersJson } from "./filter-schemas.js";
import { defaultTemplateContentType } from "./format-fields.js";
import {
  clearAutoDisableWhen,
  columns,
  filtersParam,
  type NewWebhook,
  sealed,
  type WebhookRow,
  type WebhookSecrets,
} from "./store.js";

// The rows of Kubernetes Webhook resources (owner "namespace/name"), as the operator writes them.

/** A Webhook resource's delivery format settings, named as the API's webhook fields (docs/api.md). */
export interface OwnedWebhookFormat {
  format?: DeliveryFormat;
  cloudevents_mode?: "structured" | "binary";
  template?: string | null;
  template_content_type?: string;
  signature_scheme?: "hmac-sha256" | "standard-webhooks";
  /** Clear text values; null removes them. */
  headers?: Record<string, string> | null;
  /** Whether rollout events carry payload.rollout (rollout-details-field.ts). */
  rollout_details?: boolean;
}

/**
 * The webhook a Kubernetes Webhook resource (owner "namespace/name") declares, created or brought in
 * line. Reconciles run often, so this writes only what changed:
 * - not `INSERT … ON CONFLICT`: that draws an identity value on every call, and the ids users see
 *   would jump (1 → 40 → 55). The INSERT runs only when no row is owned yet; of two racing first
 *   reconciles one inserts and the other finds its row on the next pass;
 * - the secret is compared in clear: sealing uses a fresh nonce, so a sealed secret never equals the
 *   stored one, and comparing those would rewrite the row (and move updated_at) on every reconcile.
 *   Custom header values likewise: a header read from a Secret changes without a new generation, and
 *   is written when its value does;
 * - the format fields are stored in the columns the API writes (store.ts), an absent one at its default;
 *   the filters likewise (null: none);
 * - a webhook the service disabled itself (auto-disable) stays disabled until the resource's spec
 *   changes (a new `generation`): reconciles that only refresh status must not switch it back on.
 */
export async function upsertOwnedWebhook(
  db: Queryable,
  secrets: WebhookSecrets,
  webhook: NewWebhook & { owner: string; generation?: number | undefined } & OwnedWebhookFormat,
): Promise<WebhookRow> {
  const policies = webhook.policies ?? { retryMaxAttempts: null, autoDisable: null };
  const generation = webhook.generation ?? null;
  const format = formatOf(webhook);
  const headers = webhook.headers ?? null;
  const filters = webhook.filters ?? null;
  for (;;) {
    const found = await db.query<WebhookRow>(`SELECT ${columns} FROM webhooks WHERE owner = $1`, [
      webhook.owner,
    ]);
    const existing = found.rows[0];
    if (existing) {
      const specChanged =
        generation !== null && (existing.owner_generation === null || generation > existing.owner_generation);
      const keepAutoDisabled = existing.disabled_reason !== null && !specChanged;
      const enabled = keepAutoDisabled ? false : webhook.enabled;
      const sameSecret = (existing.secret === null ? null : secrets.open(existing.secret)) === webhook.secret;
      const sameHeaders = openedHeaders(secrets, existing.headers) === clearHeaders(headers);
      const unchanged =
        sameSecret &&
        sameHeaders &&
        sameFormat(existing, format) &&
        sameFilters(existing.filters, filters) &&
        !specChanged &&
        existing.project_id === webhook.projectId &&
        existing.url === webhook.url &&
        existing.enabled === enabled &&
        existing.events.join("\n") === webhook.events.join("\n") &&
        existing.retry_max_attempts === policies.retryMaxAttempts &&
        existing.auto_disable_after_failures === (policies.autoDisable?.afterFailures ?? null) &&
        existing.auto_disable_min_seconds === (policies.autoDisable?.minDurationSeconds ?? null);
      if (unchanged) return existing;
      const { rows } = await db.query<WebhookRow>(
        `UPDATE webhooks
            SET project_id = $2, url = $3, events = $4,
                -- Decided on the row as it is now: an auto-disable recorded since it was read stands.
                enabled = CASE WHEN disabled_reason IS NOT NULL AND NOT $12 THEN false ELSE $5 END,
                secret = CASE WHEN $6 THEN secret ELSE $7 END, secret_encrypted = true,
                retry_max_attempts = $8, auto_disable_after_failures = $9, auto_disable_min_seconds = $10,
                owner_generation = COALESCE($11, owner_generation),
                format = $13, cloudevents_mode = $14, template = $15, template_content_type = $16,
                signature_scheme = $17,
                headers = CASE WHEN $18 THEN headers ELSE $19 END, header_names = $20,
                filters = $21::jsonb, rollout_details = $22,
                ${clearAutoDisableWhen("$12 OR $9::int IS NULL")},
                updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
          WHERE owner = $1
          RETURNING ${columns}`,
        [
          webhook.owner,
          webhook.projectId,
          webhook.url,
          webhook.events,
          enabled,
          sameSecret,
          sameSecret ? null : sealed(secrets, webhook.secret),
          policies.retryMaxAttempts,
          policies.autoDisable?.afterFailures ?? null,
          policies.autoDisable?.minDurationSeconds ?? null,
          generation,
          specChanged,
          ...formatValues(format),
          sameHeaders,
          sameHeaders ? null : sealCustomHeaders((clear) => secrets.seal(clear), headers),
          Object.keys(headers ?? {}).sort(),
          filtersParam(filters),
          format.rollout_details,
        ],
      );
      if (rows[0]) return rows[0];
      continue; // deleted meanwhile: start over
    }
    const { rows } = await db.query<WebhookRow>(
      `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner, secret_encrypted,
                             retry_max_attempts, auto_disable_after_failures, auto_disable_min_seconds,
                             owner_generation, format, cloudevents_mode, template, template_content_type,
                             signature_scheme, headers, header_names, filters, rollout_details)
       VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::jsonb, $19)
       ON CONFLICT (owner) DO NOTHING
       RETURNING ${columns}`,
      [
        webhook.projectId,
        webhook.url,
        sealed(secrets, webhook.secret),
        webhook.events,
        webhook.enabled,
        webhook.owner,
        policies.retryMaxAttempts,
        policies.autoDisable?.afterFailures ?? null,
        policies.autoDisable?.minDurationSeconds ?? null,
        generation,
        ...formatValues(format),
        sealCustomHeaders((clear) => secrets.seal(clear), headers),
        Object.keys(headers ?? {}).sort(),
        filtersParam(filters),
        format.rollout_details,
      ],
    );
    if (rows[0]) return rows[0];
  }
}

/** Filters compared in one order (jsonb keeps object keys in an order of its own). */
const sameFilters = (stored: WebhookFilters | null, wanted: WebhookFilters | null) =>
  JSON.stringify(stored && filtersJson(stored)) === JSON.stringify(wanted && filtersJson(wanted));

type StoredFormat = Required<Omit<OwnedWebhookFormat, "headers">>;

/** The format settings a resource asks for, an absent one at the API's default. */
const formatOf = (webhook: OwnedWebhookFormat): StoredFormat => ({
  format: webhook.format ?? "envelope",
  cloudevents_mode: webhook.cloudevents_mode ?? "structured",
  template: webhook.template ?? null,
  template_content_type: webhook.template_content_type ?? defaultTemplateContentType,
  signature_scheme: webhook.signature_scheme ?? "hmac-sha256",
  rollout_details: webhook.rollout_details ?? false,
});

/** The column values, in the order both statements above take them (rollout_details apart, last). */
const formatValues = (format: StoredFormat) => [
  format.format,
  format.cloudevents_mode,
  format.template,
  format.template_content_type,
  format.signature_scheme,
];

const sameFormat = (row: WebhookRow, format: StoredFormat) =>
  row.format === format.format &&
  row.cloudevents_mode === format.cloudevents_mode &&
  row.template === format.template &&
  (row.template_content_type ?? defaultTemplateContentType) === format.template_content_type &&
  row.signature_scheme === format.signature_scheme &&
  row.rollout_details === format.rollout_details;

/** Headers as one comparable text, in the order they are stored and sent (by name); null for none. */
function clearHeaders(headers: Record<string, string> | null): string | null {
  const names = Object.keys(headers ?? {}).sort();
  return names.length === 0 ? null : JSON.stringify(names.map((name) => [name, headers?.[name]]));
}

const openedHeaders = (secrets: WebhookSecrets, sealedHeaders: string | null) =>
  sealedHeaders === null
    ? null
    : clearHeaders(JSON.parse(secrets.open(sealedHeaders)) as Record<string, string>);

/**
 * Stops new deliveries to the webhook of a Kubernetes Webhook resource whose configuration is broken
 * (its Secret or key gone, say): disabled until the next successful reconcile brings it back in line.
 * The stored secret stays, so deliveries queued before are still signed, never sent unsigned.
 */
export async function pauseOwnedWebhook(db: Queryable, owner: string): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(
    `WITH paused AS (
       UPDATE webhooks SET enabled = false,
                           updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
        WHERE owner = $1 AND enabled
        RETURNING ${columns})
     SELECT * FROM paused
     UNION ALL SELECT ${columns} FROM webhooks WHERE owner = $1 AND NOT EXISTS (SELECT 1 FROM paused)`,
    [owner],
  );
  return rows[0];
}

/**
 * Removes the webhooks of Kubernetes Webhook resources that no longer exist ("namespace/name" not in
 * `owners`, the complete list from a successful full list): resources deleted while no operator ran,
 * or whose finalizer was removed by hand. Returns the ids that went.
 */
export async function deleteWebhooksOfMissingOwners(db: Queryable, owners: string[]): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    "DELETE FROM webhooks WHERE owner IS NOT NULL AND NOT (owner = ANY($1::text[])) RETURNING id",
    [owners],
  );
  return rows.map((row) => row.id);
}

/** Removes the webhook of a Webhook resource; returns its id, or undefined when there was none. */
export async function deleteOwnedWebhook(db: Queryable, owner: string): Promise<number | undefined> {
  const { rows } = await db.query<{ id: number }>("DELETE FROM webhooks WHERE owner = $1 RETURNING id", [
    owner,
  ]);
  return rows[0]?.id;
}
