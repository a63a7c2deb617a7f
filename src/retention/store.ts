import type { Queryable } from "../db/pool.js";

/**
 * Events are kept this much longer than attempts. An event's first attempts are written in the same
 * statement as the event, a few milliseconds later, so near the cutoff an attempt can be just young
 * enough to stay while its event is just old enough to go; the margin keeps such an event until its
 * attempts have gone too.
 */
export const eventMarginMs = 60 * 60 * 1000;

/** The oldest attempt's id, where a pass starts; null when there are none. */
export async function oldestDeliveryId(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ id: string | null }>("SELECT min(id) AS id FROM deliveries");
  return rows[0]?.id == null ? null : Number(rows[0].id);
}

export interface DeliveryWindowResult {
  removed: number;
  /** The window holds an attempt as young as the cutoff: the attempts past it are younger still. */
  reachedCutoff: boolean;
  /** The first id after the window, skipping gaps that earlier passes left; null past the last row. */
  nextId: number | null;
}

/**
 * Removes the finished attempts older than `cutoff` among ids [from, from + size). Ids grow with
 * created_at (both are drawn when the row is written), so walking the primary key window by window
 * reaches the oldest attempts first and each statement touches at most `size` rows. Unfinished
 * attempts are never removed: a delivery in progress, queued or scheduled is left as it is.
 */
export async function removeDeliveryWindow(
  db: Queryable,
  from: number,
  size: number,
  cutoff: Date,
): Promise<DeliveryWindowResult> {
  const { rows } = await db.query<{ removed: number; reached_cutoff: boolean; next_id: string | null }>(
    `WITH removed AS (
       DELETE FROM deliveries
        WHERE id >= $1 AND id < $1 + $2 AND delivered_at IS NOT NULL AND created_at < $3
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM removed)::int AS removed,
            EXISTS (SELECT 1 FROM deliveries WHERE id >= $1 AND id < $1 + $2 AND created_at >= $3)
              AS reached_cutoff,
            (SELECT min(id) FROM deliveries WHERE id >= $1 + $2) AS next_id`,
    [from, size, cutoff],
  );
  const row = rows[0];
  return {
    removed: row?.removed ?? 0,
    reachedCutoff: row?.reached_cutoff ?? true,
    nextId: row?.next_id == null ? null : Number(row.next_id),
  };
}

/**
 * Removes up to `limit` events older than `cutoff` that no remaining attempt needs: none unfinished or
 * waiting as an automatic retry (it would be sent with this envelope) and no later attempt kept (its
 * record shows this envelope). The unfinished attempts and the waiting retries are read once per
 * statement (hashed sets), not once per event. Rows a replay or a recovery has locked (FOR KEY SHARE,
 * while it writes a new attempt of the event) are skipped, so that attempt never outlives its event;
 * the next pass looks at them again.
 */
export async function removeEvents(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM events WHERE id IN (
       SELECT e.id FROM events e
        WHERE e.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.attempt_number > 1 AND d.event_id = e.id)
          AND e.id NOT IN (SELECT event_id FROM deliveries WHERE delivered_at IS NULL)
          AND e.id NOT IN (SELECT event_id FROM scheduled_retries)
        ORDER BY e.created_at
        LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}
