import { type PageRequest, selectPage } from "../db/page.js";
import type { Queryable } from "../db/pool.js";
import { forgetWebhookSeries } from "../metrics.js";
import { secretBox } from "../secrets/current.js";

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
}

const columns = "id, project_id, url, secret, events, enabled, owner, created_at, updated_at";
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

/** Secrets are sealed here, on the way in: every writer (API, operator) passes clear text. */
const sealed = (secret: string | null): string | null => (secret === null ? null : secretBox().seal(secret));

export interface NewWebhook {
  projectId: number;
  url: string;
  /** Clear text; stored sealed. */
  secret: string | null;
  events: string[];
  enabled: boolean;
  owner?: string | null;
}

export async function insertWebhook(db: Queryable, webhook: NewWebhook): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner, secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, true) RETURNING ${columns}`,
    [
      webhook.projectId,
      webhook.url,
      sealed(webhook.secret),
      webhook.events,
      webhook.enabled,
      webhook.owner ?? null,
    ],
  );
  return rows[0] as WebhookRow;
}

export interface WebhookChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
  /** undefined keeps the stored secret; null removes it. */
  secret?: string | null | undefined;
}

/**
 * Omitted fields keep their values. updated_at moves strictly forward even when two updates land in
 * the same millisecond, because the API promises a later updated_at after every update.
 */
export async function updateWebhook(
  db: Queryable,
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
      sealed(changes.secret ?? null),
    ],
  );
  return rows[0];
}

export async function deleteWebhook(db: Queryable, projectId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM webhooks WHERE project_id = $1 AND id = $2", [
    projectId,
    id,
  ]);
  if (rowCount === 1) await forgetWebhookSeries(id);
  return rowCount === 1;
}

/**
 * The webhook a Kubernetes Webhook resource (owner "namespace/name") declares, created or brought in
 * line. Reconciles run often, so this writes only what changed:
 * - not `INSERT … ON CONFLICT`: that draws an identity value on every call, and the ids users see
 *   would jump (1 → 40 → 55). The INSERT runs only when no row is owned yet; of two racing first
 *   reconciles one inserts and the other finds its row on the next pass;
 * - the secret is compared in clear: sealing uses a fresh nonce, so a sealed secret never equals the
 *   stored one, and comparing those would rewrite the row (and move updated_at) on every reconcile.
 */
export async function upsertOwnedWebhook(
  db: Queryable,
  webhook: NewWebhook & { owner: string },
): Promise<WebhookRow> {
  for (;;) {
    const found = await db.query<WebhookRow>(`SELECT ${columns} FROM webhooks WHERE owner = $1`, [
      webhook.owner,
    ]);
    const existing = found.rows[0];
    if (existing) {
      const sameSecret =
        (existing.secret === null ? null : secretBox().open(existing.secret)) === webhook.secret;
      const unchanged =
        sameSecret &&
        existing.project_id === webhook.projectId &&
        existing.url === webhook.url &&
        existing.enabled === webhook.enabled &&
        existing.events.join("\n") === webhook.events.join("\n");
      if (unchanged) return existing;
      const { rows } = await db.query<WebhookRow>(
        `UPDATE webhooks
            SET project_id = $2, url = $3, events = $4, enabled = $5,
                secret = CASE WHEN $6 THEN secret ELSE $7 END, secret_encrypted = true,
                updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
          WHERE owner = $1
          RETURNING ${columns}`,
        [
          webhook.owner,
          webhook.projectId,
          webhook.url,
          webhook.events,
          webhook.enabled,
          sameSecret,
          sameSecret ? null : sealed(webhook.secret),
        ],
      );
      if (rows[0]) return rows[0];
      continue; // deleted meanwhile: start over
    }
    const { rows } = await db.query<WebhookRow>(
      `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner, secret_encrypted)
       VALUES ($1, $2, $3, $4, $5, $6, true)
       ON CONFLICT (owner) DO NOTHING
       RETURNING ${columns}`,
      [
        webhook.projectId,
        webhook.url,
        sealed(webhook.secret),
        webhook.events,
        webhook.enabled,
        webhook.owner,
      ],
    );
    if (rows[0]) return rows[0];
  }
}

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
 * or whose finalizer was removed by hand. Returns how many went.
 */
export async function deleteWebhooksOfMissingOwners(db: Queryable, owners: string[]): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    "DELETE FROM webhooks WHERE owner IS NOT NULL AND NOT (owner = ANY($1::text[])) RETURNING id",
    [owners],
  );
  for (const { id } of rows) await forgetWebhookSeries(id);
  return rows.length;
}

export async function deleteOwnedWebhook(db: Queryable, owner: string): Promise<boolean> {
  const { rows } = await db.query<{ id: number }>("DELETE FROM webhooks WHERE owner = $1 RETURNING id", [
    owner,
  ]);
  for (const { id } of rows) await forgetWebhookSeries(id);
  return rows.length === 1;
}
