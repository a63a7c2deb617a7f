import { type PageRequest, selectPage } from "../db/page.js";
import { type Pool, type Queryable, withTransaction } from "../db/pool.js";
import type { WebhookFilters } from "../delivery-engine/event-filters.js";
import type { DeliveryFormat } from "../formats/types.js";
import { lockProjectForWebhooks } from "../projects/store.js";
import { sealCustomHeaders } from "./custom-headers.js";
import type { CloudEventsMode, FormatSettings, SignatureScheme } from "./format-fields.js";

// The webhooks table is written only by this feature: here (the API's writes), owned-store.ts (the rows
// of Webhook resources) and the auto-disable rule (auto-disable.ts), which counts failures inside the
// engine's recording statement.

export interface WebhookRow {
  id: number;
  project_id: number;
  url: string;
  /** The signing secret sealed with the secret keys (src/secrets); the sender opens it. */
  secret: string | null;
  events: string[];
  enabled: boolean;
  owner: string | null;
  created_at: Date;
  updated_at: Date;
  /** Null: no automatic retry (the spec's default). */
  retry_max_attempts: number | null;
  /** Both null (auto-disable off) or both set. */
  auto_disable_after_failures: number | null;
  auto_disable_min_seconds: number | null;
  /** Why and when the service disabled the webhook itself; null unless auto-disabled. */
  disabled_reason: string | null;
  disabled_at: Date | null;
  /** The Webhook resource generation last reconciled into this row (owned webhooks only). */
  owner_generation: number | null;
  /** What its deliveries look like (format-fields.ts); the defaults send today's envelope. */
  format: DeliveryFormat;
  cloudevents_mode: CloudEventsMode;
  template: string | null;
  template_content_type: string | null;
  signature_scheme: SignatureScheme;
  /** The custom request headers, one JSON object sealed like the secret; null for none. */
  headers: string | null;
  header_names: string[];
  /** Which subscribed events it gets (delivery-engine/event-filters.ts); null: all of them. */
  filters: WebhookFilters | null;
  /** Its rate limit, both null or both set, and until when its receiver paused it (rate-limit.ts). */
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  throttled_until: Date | null;
  /** Whether its URL is shown masked (url-secret.ts). */
  url_secret: boolean;
  /** Whether its deliveries carry `payload.rollout` (rollout-details-field.ts). */
  rollout_details: boolean;
}

export const columns =
  "id, project_id, url, secret, events, enabled, owner, created_at, updated_at, retry_max_attempts, " +
  "auto_disable_after_failures, auto_disable_min_seconds, disabled_reason, disabled_at, " +
  "owner_generation::float8 AS owner_generation, format, cloudevents_mode, template, template_content_type, " +
  "signature_scheme, headers, header_names, filters, rate_limit_per_second, rate_limit_burst, throttled_until, " +
  "url_secret, rollout_details";

/** The opt-in delivery policies of a webhook; null turns one off. */
export interface WebhookPolicies {
  retryMaxAttempts: number | null;
  autoDisable: { afterFailures: number; minDurationSeconds: number } | null;
}
const newestFirst = "ORDER BY created_at DESC, id DESC";

export async function listWebhooks(db: Queryable, projectId: number): Promise<WebhookRow[]> {
  const { rows } = await db.query<WebhookRow>(
    `SELECT ${columns} FROM webhooks WHERE project_id = $1 ${newestFirst}`,
    [projectId],
  );
  return rows;
}

export function listWebhooksPage(
  db: Queryable,
  projectId: number,
  page: PageRequest,
): Promise<{ rows: WebhookRow[]; total: number }> {
  return selectPage<WebhookRow>(
    db,
    {
      columns,
      from: "webhooks WHERE project_id = $1",
      orderBy: "created_at DESC, id DESC",
      params: [projectId],
    },
    page,
  );
}

export async function findWebhook(
  db: Queryable,
  projectId: number,
  id: number,
): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(
    `SELECT ${columns} FROM webhooks WHERE project_id = $1 AND id = $2`,
    [projectId, id],
  );
  return rows[0];
}

/**
 * The secret keys, handed in by the service (secrets/secret-box.ts): secrets are sealed here, on the way
 * in (every writer, API or operator, passes clear text), and opened to be compared.
 */
export interface WebhookSecrets {
  seal(secret: string): string;
  open(sealed: string): string;
}

export const sealed = (secrets: WebhookSecrets, secret: string | null): string | null =>
  secret === null ? null : secrets.seal(secret);

export interface NewWebhook {
  projectId: number;
  url: string;
  /** Clear text; stored sealed. */
  secret: string | null;
  events: string[];
  enabled: boolean;
  owner?: string | null;
  policies?: WebhookPolicies;
  formatSettings?: FormatSettings;
  /** Clear text; stored sealed. */
  headers?: Record<string, string> | null;
  filters?: WebhookFilters | null;
}

/** Filters as the jsonb parameter of a write (null: none). */
export const filtersParam = (filters: WebhookFilters | null | undefined): string | null =>
  filters ? JSON.stringify(filters) : null;

export async function insertWebhook(
  db: Queryable,
  secrets: WebhookSecrets,
  webhook: NewWebhook,
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner, secret_encrypted,
                           retry_max_attempts, auto_disable_after_failures, auto_disable_min_seconds,
                           format, cloudevents_mode, template, template_content_type, signature_scheme,
                           headers, header_names, filters)
     VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, COALESCE($10, 'envelope'), COALESCE($11, 'structured'),
             $12, $13, COALESCE($14, 'hmac-sha256'), $15, $16, $17::jsonb) RETURNING ${columns}`,
    [
      webhook.projectId,
      webhook.url,
      sealed(secrets, webhook.secret),
      webhook.events,
      webhook.enabled,
      webhook.owner ?? null,
      webhook.policies?.retryMaxAttempts ?? null,
      webhook.policies?.autoDisable?.afterFailures ?? null,
      webhook.policies?.autoDisable?.minDurationSeconds ?? null,
      webhook.formatSettings?.format ?? null,
      webhook.formatSettings?.cloudeventsMode ?? null,
      webhook.formatSettings?.template ?? null,
      webhook.formatSettings?.templateContentType ?? null,
      webhook.formatSettings?.signatureScheme ?? null,
      sealCustomHeaders((clear) => secrets.seal(clear), webhook.headers ?? null),
      headerNames(webhook.headers ?? null),
      filtersParam(webhook.filters),
    ],
  );
  return rows[0] as WebhookRow;
}

/**
 * Inserts a webhook unless its project already has `limit` (then undefined). The project row is locked
 * first, in a statement of its own: two creates in one project take turns, and the count, made after
 * the lock in a new statement (a new snapshot), sees the webhook the other one added.
 */
export async function insertWebhookWithinLimit(
  pool: Pool,
  secrets: WebhookSecrets,
  limit: number,
  webhook: NewWebhook,
): Promise<WebhookRow | undefined> {
  return withTransaction(pool, async (client) => {
    await lockProjectForWebhooks(client, webhook.projectId);
    const { rows } = await client.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM webhooks WHERE project_id = $1",
      [webhook.projectId],
    );
    if ((rows[0]?.count ?? 0) >= limit) return undefined;
    return insertWebhook(client, secrets, webhook);
  });
}

export interface WebhookChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
  /** undefined keeps the stored secret; null removes it. */
  secret?: string | null | undefined;
  /** undefined keeps the stored policy; null turns it off. */
  retryMaxAttempts?: number | null | undefined;
  autoDisable?: WebhookPolicies["autoDisable"] | undefined;
  /** undefined keeps the stored settings (resolved against them by the caller). */
  formatSettings?: FormatSettings | undefined;
  /** undefined keeps the stored headers; null or {} removes them. */
  headers?: Record<string, string> | null | undefined;
  /** undefined keeps the stored filters; null removes them. */
  filters?: WebhookFilters | null | undefined;
}

/** A stored webhook's format settings, as an update resolves new ones against. */
export const formatSettingsOf = (row: WebhookRow): FormatSettings => ({
  format: row.format,
  cloudeventsMode: row.cloudevents_mode,
  template: row.template,
  templateContentType: row.template_content_type,
  signatureScheme: row.signature_scheme,
});

/** The names of custom headers as stored in clear: sorted. */
const headerNames = (headers: Record<string, string> | null): string[] => Object.keys(headers ?? {}).sort();

/**
 * Omitted fields keep their values. updated_at moves strictly forward even when two updates land in
 * the same millisecond, because the API promises a later updated_at after every update.
 * `enabled: true` clears an automatic disable (its reason and time) and restarts the failure count;
 * so does turning auto-disable off.
 */
export async function updateWebhook(
  db: Queryable,
  secrets: WebhookSecrets,
  projectId: number,
  id: number,
  changes: WebhookChanges,
): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(
    `UPDATE webhooks SET
       url = COALESCE($3, url),
       events = COALESCE($4, events),
       enabled = COALESCE($5, enabled),
       secret = CASE WHEN $6 THEN $7 ELSE secret END,
       secret_encrypted = CASE WHEN $6 THEN true ELSE secret_encrypted END,
       retry_max_attempts = CASE WHEN $8 THEN $9 ELSE retry_max_attempts END,
       auto_disable_after_failures = CASE WHEN $10 THEN $11 ELSE auto_disable_after_failures END,
       auto_disable_min_seconds = CASE WHEN $10 THEN $12 ELSE auto_disable_min_seconds END,
       format = CASE WHEN $13 THEN $14 ELSE format END,
       cloudevents_mode = CASE WHEN $13 THEN $15 ELSE cloudevents_mode END,
       template = CASE WHEN $13 THEN $16 ELSE template END,
       template_content_type = CASE WHEN $13 THEN $17 ELSE template_content_type END,
       signature_scheme = CASE WHEN $13 THEN $18 ELSE signature_scheme END,
       headers = CASE WHEN $19 THEN $20 ELSE headers END,
       header_names = CASE WHEN $19 THEN $21::text[] ELSE header_names END,
       filters = CASE WHEN $22 THEN $23::jsonb ELSE filters END,
       ${clearAutoDisableWhen("$5 IS TRUE OR ($10 AND $11::int IS NULL)")},
       updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
     WHERE project_id = $1 AND id = $2
     RETURNING ${columns}`,
    [
      projectId,
      id,
      changes.url ?? null,
      changes.events ?? null,
      changes.enabled ?? null,
      changes.secret !== undefined,
      sealed(secrets, changes.secret ?? null),
      changes.retryMaxAttempts !== undefined,
      changes.retryMaxAttempts ?? null,
      changes.autoDisable !== undefined,
      changes.autoDisable?.afterFailures ?? null,
      changes.autoDisable?.minDurationSeconds ?? null,
      changes.formatSettings !== undefined,
      changes.formatSettings?.format ?? null,
      changes.formatSettings?.cloudeventsMode ?? null,
      changes.formatSettings?.template ?? null,
      changes.formatSettings?.templateContentType ?? null,
      changes.formatSettings?.signatureScheme ?? null,
      changes.headers !== undefined,
      sealCustomHeaders((clear) => secrets.seal(clear), changes.headers ?? null),
      headerNames(changes.headers ?? null),
      changes.filters !== undefined,
      filtersParam(changes.filters),
    ],
  );
  return rows[0];
}

/** SET clauses that forget an automatic disable and the failure count behind it when `condition` holds. */
export const clearAutoDisableWhen = (condition: string) => `
       disabled_reason = CASE WHEN ${condition} THEN NULL ELSE disabled_reason END,
       disabled_at = CASE WHEN ${condition} THEN NULL ELSE disabled_at END,
       consecutive_failures = CASE WHEN ${condition} THEN 0 ELSE consecutive_failures END,
       failing_since = CASE WHEN ${condition} THEN NULL ELSE failing_since END`;

export async function deleteWebhook(db: Queryable, projectId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM webhooks WHERE project_id = $1 AND id = $2", [
    projectId,
    id,
  ]);
  return rowCount === 1;
}

/**
 * The stored secrets to seal with the newest key (secrets/reencrypt.ts): clear text left by a version
 * before encryption, and with `sealedToo` also secrets sealed already.
 */
export async function listStoredSecrets(
  db: Queryable,
  options: { sealedToo: boolean },
): Promise<{ id: number; secret: string; secret_encrypted: boolean }[]> {
  const { rows } = await db.query<{ id: number; secret: string; secret_encrypted: boolean }>(
    `SELECT id, secret, secret_encrypted FROM webhooks
      WHERE secret IS NOT NULL ${options.sealedToo ? "" : "AND NOT secret_encrypted"} ORDER BY id`,
  );
  return rows;
}

/** Replaces a stored secret with its newly sealed form, unless it changed since it was read. */
export async function replaceStoredSecret(
  db: Queryable,
  id: number,
  change: { read: string; sealed: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    "UPDATE webhooks SET secret = $2, secret_encrypted = true WHERE id = $1 AND secret = $3",
    [id, change.sealed, change.read],
  );
  return rowCount === 1;
}

/** The sealed custom headers of every webhook that has some (secrets/reencrypt.ts moves them to the newest key). */
export async function listStoredHeaders(db: Queryable): Promise<{ id: number; headers: string }[]> {
  const { rows } = await db.query<{ id: number; headers: string }>(
    "SELECT id, headers FROM webhooks WHERE headers IS NOT NULL ORDER BY id",
  );
  return rows;
}

/** Replaces sealed custom headers with their newly sealed form, unless they changed since they were read. */
export async function replaceStoredHeaders(
  db: Queryable,
  id: number,
  change: { read: string; sealed: string },
): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE webhooks SET headers = $2 WHERE id = $1 AND headers = $3", [
    id,
    change.sealed,
    change.read,
  ]);
  return rowCount === 1;
}
