import type { Queryable } from "../db/pool.js";

/** A finished attempt, as much of it as a Webhook's status shows (the error message only to classify). */
export interface AttemptRow {
  created_at: Date;
  delivered_at: Date;
  success: boolean;
  status_code: number;
  event_type: string;
  attempt_number: number;
  error_message: string | null;
}

export interface DeliveryHealthRows {
  succeeded: number;
  failed: number;
  /** The latest finished attempts, newest first, at most `latest` of them. */
  attempts: AttemptRow[];
}

/**
 * What a Webhook resource's status says about its deliveries, in one statement (one round trip per
 * status refresh). The counts are index-only scans, as in stats-store.ts: every attempt since `since`
 * from the by-webhook index, failures from the failures' partial index, succeeded their difference.
 * The latest attempts walk the by-webhook index from its newest end and stop after `latest` rows, so a
 * webhook with millions of attempts costs the same as one with ten; a last success or failure older
 * than those is carried over from the previous status by the caller rather than searched for.
 */
export async function readDeliveryHealth(
  db: Queryable,
  webhookId: number,
  options: { since: Date; latest: number },
): Promise<DeliveryHealthRows> {
  const { rows } = await db.query<{ total: number; failed: number; attempts: AttemptRow[] | null }>(
    `SELECT
       (SELECT count(*)::int FROM deliveries
         WHERE webhook_id = $1 AND delivered_at IS NOT NULL AND created_at >= $2) AS total,
       (SELECT count(*)::int FROM deliveries
         WHERE webhook_id = $1 AND delivered_at IS NOT NULL AND success = false AND created_at >= $2) AS failed,
       (SELECT json_agg(latest ORDER BY latest.created_at DESC, latest.id DESC) FROM (
          SELECT id, created_at, delivered_at, success, status_code, event_type, attempt_number, error_message
            FROM deliveries
           WHERE webhook_id = $1 AND delivered_at IS NOT NULL
           ORDER BY created_at DESC, id DESC LIMIT $3) latest) AS attempts`,
    [webhookId, options.since, options.latest],
  );
  const row = rows[0] ?? { total: 0, failed: 0, attempts: null };
  return {
    succeeded: row.total - row.failed,
    failed: row.failed,
    // json_agg gives timestamps as text; the rest of the code reads Dates, as from any other query.
    attempts: (row.attempts ?? []).map((attempt) => ({
      ...attempt,
      created_at: new Date(attempt.created_at),
      delivered_at: new Date(attempt.delivered_at),
    })),
  };
}
