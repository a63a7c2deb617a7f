import { type PageRequest, selectPage } from "../db/page.js";
import type { Queryable } from "../db/pool.js";

export interface WebhookRow {
  id: number;
  project_id: number;
  url: string;
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

export interface NewWebhook {
  projectId: number;
  url: string;
  secret: string | null;
  events: string[];
  enabled: boolean;
  owner?: string | null;
}

export async function insertWebhook(db: Queryable, webhook: NewWebhook): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (project_id, url, secret, events, enabled, owner)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
    [webhook.projectId, webhook.url, webhook.secret, webhook.events, webhook.enabled, webhook.owner ?? null],
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
      changes.secret ?? null,
    ],
  );
  return rows[0];
}

export async function deleteWebhook(db: Queryable, projectId: number, id: number): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM webhooks WHERE project_id = $1 AND id = $2", [
    projectId,
    id,
  ]);
  return rowCount === 1;
}

/**
 * The webhook a Kubernetes Webhook resource (owner "namespace/name") declares, created or brought in
 * line. Not `INSERT … ON CONFLICT DO UPDATE`: that draws an identity value on every call, and reconciles
 * run often, so the ids users see would jump (1 → 40 → 55). The INSERT runs only when no row is owned
 * yet; of two racing first reconciles one inserts and the other finds its row on the second pass.
 */
export async function upsertOwnedWebhook(
  db: Queryable,
  webhook: NewWebhook & { owner: string },
): Promise<WebhookRow> {
  for (;;) {
    const { rows } = await db.query<WebhookRow>(
      `WITH existing AS (SELECT ${columns} FROM webhooks WHERE owner = $6),
       updated AS (
         UPDATE webhooks
            SET project_id = $1, url = $2, secret = $3, events = $4, enabled = $5,
                updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
          WHERE owner = $6
            AND (project_id, url, secret, events, enabled) IS DISTINCT FROM ($1, $2, $3, $4::text[], $5)
          RETURNING ${columns}),
       inserted AS (
         INSERT INTO webhooks (project_id, url, secret, events, enabled, owner)
         SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM existing)
         ON CONFLICT (owner) DO NOTHING
         RETURNING ${columns})
       SELECT * FROM updated
       UNION ALL SELECT * FROM existing WHERE NOT EXISTS (SELECT 1 FROM updated)
       UNION ALL SELECT * FROM inserted`,
      [webhook.projectId, webhook.url, webhook.secret, webhook.events, webhook.enabled, webhook.owner],
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
  const { rowCount } = await db.query(
    "DELETE FROM webhooks WHERE owner IS NOT NULL AND NOT (owner = ANY($1::text[]))",
    [owners],
  );
  return rowCount ?? 0;
}

export async function deleteOwnedWebhook(db: Queryable, owner: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM webhooks WHERE owner = $1", [owner]);
  return rowCount === 1;
}
