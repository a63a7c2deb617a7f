import type { Queryable } from "../db/pool.js";
import { z } from "../http/openapi.js";
import { iso, isoTimestamp, numberError } from "../http/schemas.js";
import { columns, type WebhookRow } from "./store.js";

// A webhook's opt-in rate limit and its receiver's pause, as the API shows and takes them
// (docs/deliveries.md, "Pace"). The delivery engine applies them (delivery-engine/pace.ts).

const objectError = (issue: { code?: string }) =>
  issue.code === "unrecognized_keys" ? undefined : "rate_limit must be an object {per_second, burst} or null";

export const rateLimit = z
  .strictObject(
    {
      per_second: z
        .number({ error: numberError("rate_limit.per_second") })
        .positive("rate_limit.per_second must be above 0")
        .max(10_000, "rate_limit.per_second must be at most 10000"),
      burst: z
        .number({ error: numberError("rate_limit.burst") })
        .int("rate_limit.burst must be a whole number")
        .min(1, "rate_limit.burst must be at least 1")
        .max(10_000, "rate_limit.burst must be at most 10000"),
    },
    { error: objectError },
  )
  .openapi("RateLimit", {
    description:
      "At most `burst` deliveries at once, refilled at `per_second` a second, shared by every replica. " +
      "null (the default): as fast as the service sends.",
  });

/** The fields the webhook's reads gain. */
export const paceReadFields = {
  rate_limit: rateLimit.nullable(),
  throttled_until: isoTimestamp.nullable().openapi({
    description:
      "Until when the receiver paused this webhook's sends (a 429 or 503 with Retry-After), or null. " +
      "Deliveries wait, they do not fail.",
  }),
};

export type RateLimit = z.infer<typeof rateLimit>;

/** The webhook's rate limit and pause as the API shows them; a pause that ended shows as null. */
export function paceJson(
  row: Pick<WebhookRow, "rate_limit_per_second" | "rate_limit_burst" | "throttled_until">,
) {
  const paused = row.throttled_until !== null && row.throttled_until.getTime() > Date.now();
  return {
    rate_limit:
      row.rate_limit_per_second === null || row.rate_limit_burst === null
        ? null
        : { per_second: row.rate_limit_per_second, burst: row.rate_limit_burst },
    throttled_until: paused ? iso(row.throttled_until) : null,
  };
}

/**
 * Sets (or with null removes) a webhook's rate limit; its bucket starts full. Returns the row as it is
 * now, or undefined when the webhook is not in the project.
 */
export async function setRateLimit(
  db: Queryable,
  projectId: number,
  webhookId: number,
  limit: RateLimit | null,
): Promise<WebhookRow | undefined> {
  // The bucket is the webhook's pace row (migration 021), which the workers' claims lock: a new limit
  // starts it full, none removes it.
  const { rows } = await db.query<WebhookRow>(
    `WITH updated AS (
       UPDATE webhooks SET rate_limit_per_second = $3, rate_limit_burst = $4
        WHERE project_id = $1 AND id = $2
        RETURNING ${columns}
     ), removed AS (
       DELETE FROM webhook_pace WHERE webhook_id IN (SELECT id FROM updated) AND $4::int IS NULL
     ), filled AS (
       INSERT INTO webhook_pace (webhook_id, tokens, refilled_at)
       SELECT id, $4::int, clock_timestamp() FROM updated WHERE $4::int IS NOT NULL
       ON CONFLICT (webhook_id) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
     )
     SELECT * FROM updated`,
    [projectId, webhookId, limit?.per_second ?? null, limit?.burst ?? null],
  );
  return rows[0];
}

/** The row after applying a create's or an update's `rate_limit` (undefined: left as it is). */
export async function withRateLimit(
  db: Queryable,
  row: WebhookRow,
  given: RateLimit | null | undefined,
): Promise<WebhookRow> {
  if (given === undefined) return row;
  return (await setRateLimit(db, row.project_id, row.id, given)) ?? row;
}

/**
 * A Webhook resource's rate limit into its row, only when it changed: setting it starts a full bucket,
 * which every reconcile would otherwise hand out again.
 */
export async function syncRateLimit(
  db: Queryable,
  row: WebhookRow,
  limit: { perSecond: number; burst: number } | undefined,
): Promise<void> {
  const perSecond = limit?.perSecond ?? null;
  const burst = limit?.burst ?? null;
  if (row.rate_limit_per_second === perSecond && row.rate_limit_burst === burst) return;
  await setRateLimit(
    db,
    row.project_id,
    row.id,
    limit ? { per_second: limit.perSecond, burst: limit.burst } : null,
  );
}
