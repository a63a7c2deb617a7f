import type { Queryable } from "../db/pool.js";
import type { PageRequest } from "../http/pagination.js";
import { offsetOf } from "../http/pagination.js";
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

export async function listWebhooksPage(
  db: Queryable,
  projectId: number,
  page: PageRequest,
): Promise<{ rows: WebhookRow[]; total: number }> {
  const [items, count] = await Promise.all([
    db.query<WebhookRow>(
      `SELECT ${columns} FROM webhooks WHERE project_id = $1 ${newestFirst} LIMIT $2 OFFSET $3`,
      [projectId, page.size, offsetOf(page)],
    ),
    db.query<{ total: number }>("SELECT count(*)::int AS total FROM webhooks WHERE project_id = $1", [
      projectId,
    ]),
  ]);
  return { rows: items.rows, total: count.rows[0]?.total ?? 0 };
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

/** The webhook a Kubernetes Webhook resource (owner "namespace/name") declares, created or brought in line. */
export async function upsertOwnedWebhook(
  db: Queryable,
  webhook: NewWebhook & { owner: string },
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner, secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, true)
     ON CONFLICT (owner) DO UPDATE
        SET project_id = EXCLUDED.project_id, url = EXCLUDED.url, secret = EXCLUDED.secret,
            secret_encrypted = true,
            events = EXCLUDED.events, enabled = EXCLUDED.enabled,
            updated_at = greatest(clock_timestamp(), webhooks.updated_at + interval '1 millisecond')
      WHERE (webhooks.project_id, webhooks.url, webhooks.secret, webhooks.events, webhooks.enabled)
            IS DISTINCT FROM (EXCLUDED.project_id, EXCLUDED.url, EXCLUDED.secret, EXCLUDED.events, EXCLUDED.enabled)
     RETURNING ${columns}`,
    [webhook.projectId, webhook.url, sealed(webhook.secret), webhook.events, webhook.enabled, webhook.owner],
  );
  if (rows[0]) return rows[0];
  // Nothing changed: the conflict's WHERE skipped the update, so read the row as it is.
  const existing = await db.query<WebhookRow>(`SELECT ${columns} FROM webhooks WHERE owner = $1`, [
    webhook.owner,
  ]);
  return existing.rows[0] as WebhookRow;
}

export async function deleteOwnedWebhook(db: Queryable, owner: string): Promise<boolean> {
  const { rows } = await db.query<{ id: number }>("DELETE FROM webhooks WHERE owner = $1 RETURNING id", [
    owner,
  ]);
  for (const { id } of rows) await forgetWebhookSeries(id);
  return rows.length === 1;
}
