import type { Queryable } from "../db/pool.js";
import { metrics } from "../metrics.js";

// Pace per webhook (docs/deliveries.md, "Pace"). Two things hold a webhook's sends back, both kept in
// Postgres so that every replica obeys them together, not each process on its own:
// - its rate limit (rate_limit_per_second, rate_limit_burst): a token bucket whose level is the
//   webhook's pace row (webhook_pace, migration 021). The claim (sql/claim.sql, `gates` and
//   `pace_taken`) locks that row (SKIP LOCKED: a replica claiming it at the same moment is passed over,
//   never waited for), takes at most the whole tokens there are, and stores what is left. A row is
//   paced when it is claimed; it is sent within the claim-ahead wait (worker.ts).
// - a receiver's pause (throttled_until): a 429 or 503 with Retry-After (retry-after.ts). The claim
//   takes none of its rows until then; the delivery that was answered so goes back to the queue.

/**
 * Pauses a webhook's sends until `untilMs` (never shortening a pause already longer) and gives the
 * delivery its receiver answered so back to the queue, in one statement: no replica can claim it before
 * the pause is in place. The delivery keeps its attempt number: it was not an attempt that failed.
 */
export async function pauseWebhook(
  db: Queryable,
  pause: { webhookId: number; deliveryId: number; workerId: string; untilMs: number; reason: string },
): Promise<void> {
  await db.query(
    `WITH paused AS (
       UPDATE webhooks
          SET throttled_until = GREATEST(COALESCE(throttled_until, '-infinity'), to_timestamp($2 / 1000.0)),
              throttled_reason = $3
        WHERE id = $1
     )
     UPDATE deliveries SET state = 'queued', locked_by = NULL, locked_until = NULL
      WHERE id = $4 AND locked_by = $5 AND delivered_at IS NULL`,
    [pause.webhookId, pause.untilMs, pause.reason, pause.deliveryId, pause.workerId],
  );
  metrics.webhookThrottled.inc({ reason: "retry_after" });
}

/**
 * Whether a paced webhook's row waited so long for a free slot after its claim that sending it now
 * could bunch with rows claimed later: it goes back to the queue instead (its token is spent) and is
 * claimed again with a fresh one. With the wait bounded by the interval between two tokens, any window
 * of sends holds at most one more than the limit allows in it; for limits above 100 a second the wait
 * allowed is 10 ms, so a window may hold up to a hundredth of the rate more.
 */
export function tokenStale(row: { pace_interval_ms: number | null }, claimedAtMs: number): boolean {
  return row.pace_interval_ms !== null && Date.now() - claimedAtMs > Math.max(10, row.pace_interval_ms);
}

/**
 * When a worker should claim again without being woken: a paced webhook's next token, or the end of a
 * pause this worker was told of. Other replicas find either on their poll tick at the latest.
 */
export class PaceWake {
  private timer: NodeJS.Timeout | undefined;
  private atMs = Number.POSITIVE_INFINITY;
  /** The pauses this worker was told of, until they end: its rows claimed ahead are not sent meanwhile. */
  private readonly pauses = new Map<number, number>();

  constructor(private readonly wake: () => void) {}

  /** Rows of a paced webhook were claimed: its next token comes one interval later. */
  claimed(rows: ReadonlyArray<{ pace_interval_ms: number | null }>): void {
    for (const row of rows) if (row.pace_interval_ms !== null) this.at(Date.now() + row.pace_interval_ms);
  }

  /** The webhook's receiver paused it until `untilMs`: claim again then. */
  paused(webhookId: number, untilMs: number): void {
    this.pauses.set(webhookId, Math.max(untilMs, this.pauses.get(webhookId) ?? 0));
    this.at(untilMs);
  }

  /** Whether a send of the webhook must wait for a pause this worker knows of. */
  isPaused(webhookId: number): boolean {
    const until = this.pauses.get(webhookId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.pauses.delete(webhookId);
    return false;
  }

  /** Claim again at `atMs` (the earliest of the times asked for wins). */
  at(atMs: number): void {
    if (atMs >= this.atMs) return;
    clearTimeout(this.timer);
    this.atMs = atMs;
    this.timer = setTimeout(
      () => {
        this.atMs = Number.POSITIVE_INFINITY;
        this.timer = undefined;
        this.wake();
      },
      Math.max(5, atMs - Date.now()),
    );
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
