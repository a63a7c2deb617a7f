import type { Queryable } from "../db/pool.js";
import type { DeliveryCursor } from "../deliveries/cursor.js";
import { type Requirement, requirementsSql, type Selectable } from "./selectors.js";

/** One attempt as the aggregated API shows it: no payload and no response body (those stay in /api). */
export interface DeliveryAttemptRow {
  id: number;
  namespace: string;
  webhook: string;
  webhook_id: number;
  project_id: number;
  /** Read to mask a tokenised URL in error messages (webhooks/url-secret.ts); never shown. */
  url: string;
  url_secret: boolean;
  event_type: string;
  event_id: string;
  /** Null while the attempt is queued or in flight (only the watch sees such rows). */
  success: boolean | null;
  status_code: number | null;
  error_message: string | null;
  attempt_number: number;
  rollout_id: number | null;
  created_at: Date;
  delivered_at: Date | null;
  duration_ms: number | null;
}

// A webhook is named by its Webhook resource (owner is "namespace/name"), or by its id when it was
// made through /api. Projects are namespaces: only those that came from one, and are not withdrawn.
const webhookName = `COALESCE(NULLIF(split_part(w.owner, '/', 2), ''), w.id::text)`;
const outcome = `CASE WHEN d.delivered_at IS NULL THEN NULL WHEN d.success THEN 'succeeded' ELSE 'failed' END`;
const attemptSelect = `
  SELECT d.id::float8 AS id, p.slug AS namespace, ${webhookName} AS webhook, d.webhook_id::float8 AS webhook_id,
         w.project_id::float8 AS project_id, w.url, w.url_secret,
         d.event_type, d.event_id, d.success, d.status_code, d.error_message, d.attempt_number,
         d.rollout_id::float8 AS rollout_id, d.created_at, d.delivered_at, d.duration_ms
    FROM deliveries d
    JOIN webhooks w ON w.id = d.webhook_id
    JOIN projects p ON p.id = w.project_id AND p.from_namespace AND NOT p.withdrawn`;

/** What `-l` and `--field-selector` select deliveries by (docs/kubernetes.md, "Deliveries in kubectl"). */
export const deliverySelectable: { labels: Selectable; fields: Selectable } = {
  labels: { webhook: webhookName, event: "d.event_type", outcome, rollout: "d.rollout_id::text" },
  fields: {
    "metadata.name": "d.id::text",
    "metadata.namespace": "p.slug",
    "spec.webhook": webhookName,
    "spec.event": "d.event_type",
    "status.outcome": outcome,
    "spec.rollout": "d.rollout_id::text",
  },
};

export interface AttemptQuery {
  /** Undefined: every namespace. */
  namespace: string | undefined;
  requirements: Requirement[];
}

/**
 * One page of finished attempts, newest first, by keyset below `before` (never OFFSET: a page deep in
 * a long history costs what the first does). One row more than `limit` tells whether more follow.
 */
export async function listAttempts(
  db: Queryable,
  query: AttemptQuery,
  page: { limit: number; before: DeliveryCursor | undefined },
): Promise<DeliveryAttemptRow[]> {
  const selectors = requirementsSql(query.requirements, 5);
  const { rows } = await db.query<DeliveryAttemptRow>(
    `${attemptSelect}
      WHERE d.delivered_at IS NOT NULL AND ($1::text IS NULL OR p.slug = $1)
        AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2, $3))${selectors.sql}
      ORDER BY d.created_at DESC, d.id DESC LIMIT $4`,
    [
      query.namespace ?? null,
      page.before?.createdAt ?? null,
      page.before?.id ?? null,
      page.limit + 1,
      ...selectors.params,
    ],
  );
  return rows;
}

export async function findAttempt(
  db: Queryable,
  namespace: string,
  id: number,
): Promise<DeliveryAttemptRow | undefined> {
  const { rows } = await db.query<DeliveryAttemptRow>(
    `${attemptSelect} WHERE d.id = $1 AND p.slug = $2 AND d.delivered_at IS NOT NULL`,
    [id, namespace],
  );
  return rows[0];
}

/** The highest delivery id: where a watch that starts from a list begins. */
export async function latestDeliveryId(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    "SELECT COALESCE(max(id), 0)::float8 AS id FROM deliveries",
  );
  return rows[0]?.id ?? 0;
}

/**
 * What a watch reads each turn: rows above `after` (new since the last turns) and the rows it saw
 * unfinished (`pending`), finished or not; on its first turn (`firstTurn`) also every unfinished row at
 * or below `after`, which a list from that version could not show. Selectors apply to finished rows only:
 * an unfinished row has no outcome yet.
 */
export async function attemptsSince(
  db: Queryable,
  query: AttemptQuery,
  turn: { after: number; pending: number[]; firstTurn: boolean },
): Promise<DeliveryAttemptRow[]> {
  const selectors = requirementsSql(query.requirements, 5);
  const { rows } = await db.query<DeliveryAttemptRow>(
    `${attemptSelect}
      WHERE ($1::text IS NULL OR p.slug = $1)
        AND (d.id > $2 OR d.id = ANY($3::bigint[]) OR ($4 AND d.delivered_at IS NULL))
        AND (d.delivered_at IS NULL OR (true${selectors.sql}))
      ORDER BY d.id`,
    [query.namespace ?? null, turn.after, turn.pending, turn.firstTurn, ...selectors.params],
  );
  return rows;
}
