import type { Queryable } from "../db/pool.js";
import type { RolloutDetails } from "../formats/rollout-details.js";
import type { DeliveryCursor } from "./cursor.js";

/** A finished attempt joined with the envelope it sent (or with the body its format rendered). */
export interface DeliveryRecordRow {
  id: number;
  webhook_id: number;
  event_type: string;
  event_id: string;
  payload: string;
  success: boolean;
  status_code: number;
  response_body: string;
  error_message: string | null;
  attempt_number: number;
  created_at: Date;
  delivered_at: Date;
  /** The X-Webhook-Timestamp sent (Unix seconds); null before migration 009 or when nothing was sent. */
  request_timestamp: number | null;
  signature: string | null;
  /** How long the attempt took (ms); null when no request was sent, or before migration 013. */
  duration_ms: number | null;
  /** True when payload is the body the webhook's format rendered, false when it is the event's envelope. */
  rendered: boolean;
  /** A shaped delivery's Content-Type and format headers, and every header as sent (custom ones masked). */
  body_headers: Record<string, string> | null;
  request_headers: Record<string, string> | null;
}

// Only finished attempts (state 'done', delivered_at set) are delivery records in the API's sense; queued and in-flight
// rows are the outbox, visible through the queue metrics instead.
const recordColumns = `
  d.id, d.webhook_id, d.event_type, d.event_id, COALESCE(d.body, e.envelope) AS payload, d.success,
  d.status_code, d.response_body, d.error_message, d.attempt_number, d.created_at, d.delivered_at,
  d.request_timestamp, d.signature, d.duration_ms, d.body IS NOT NULL AS rendered, d.body_headers,
  d.request_headers`;
const recordSelect = `SELECT ${recordColumns} FROM deliveries d JOIN events e ON e.id = d.event_id`;

export interface DeliveryFilter {
  limit: number;
  /** Only rows strictly older than this (the previous page's last row). */
  before?: DeliveryCursor | undefined;
  success?: boolean | undefined;
  eventType?: string | undefined;
}

/**
 * Newest first, by keyset: (created_at, id) below the cursor. Both filters are optional; a failed-only
 * list walks the partial index of failures (migration 005).
 */
export async function listDeliveryRecords(
  db: Queryable,
  webhookId: number,
  filter: DeliveryFilter,
): Promise<DeliveryRecordRow[]> {
  const { rows } = await db.query<DeliveryRecordRow>(
    `${recordSelect} WHERE d.webhook_id = $1 AND d.delivered_at IS NOT NULL
        AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2, $3))
        AND ($4::boolean IS NULL OR d.success = $4)
        AND ($5::text IS NULL OR d.event_type = $5)
      ORDER BY d.created_at DESC, d.id DESC LIMIT $6`,
    [
      webhookId,
      filter.before?.createdAt ?? null,
      filter.before?.id ?? null,
      filter.success ?? null,
      filter.eventType ?? null,
      filter.limit,
    ],
  );
  return rows;
}

export async function findDeliveryRecord(
  db: Queryable,
  webhookId: number,
  id: number,
): Promise<(DeliveryRecordRow & { rollout: RolloutDetails | null }) | undefined> {
  // With the event's rollout details, which a replay of a delivery that kept no body of its own renders.
  const { rows } = await db.query<DeliveryRecordRow & { rollout: RolloutDetails | null }>(
    `SELECT ${recordColumns}, e.rollout_details AS rollout FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.webhook_id = $1 AND d.id = $2 AND d.delivered_at IS NOT NULL`,
    [webhookId, id],
  );
  return rows[0];
}

export interface LastDelivery {
  id: number;
  delivered_at: Date;
  success: boolean;
  status_code: number;
  event_type: string;
}

export async function findLastDelivery(db: Queryable, webhookId: number): Promise<LastDelivery | undefined> {
  const { rows } = await db.query<LastDelivery>(
    `SELECT id, delivered_at, success, status_code, event_type FROM deliveries
      WHERE webhook_id = $1 AND delivered_at IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1`,
    [webhookId],
  );
  return rows[0];
}
