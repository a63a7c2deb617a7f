import type { Queryable } from "../db/pool.js";
import { type FilterSubject, filtersMatch } from "../delivery-engine/event-filters.js";
import { filterReasons } from "./filter-reasons.js";
import type { WebhookRow } from "./store.js";

// Whether a webhook would get an event of an example workload, and why not (docs/api.md, "Checking
// filters"): a filter can be tried without a cluster. The filters' verdict is the emit statement's own
// SQL expression, run on the stored row; the reasons put it in words.

export interface FilterCheck {
  event_type: string;
  would_deliver: boolean;
  reasons: string[];
}

/** The filters' verdict as the emit statement reaches it, for the stored webhook and `subject`. */
async function filtersLetThrough(
  db: Queryable,
  webhook: WebhookRow,
  subject: FilterSubject,
): Promise<boolean> {
  const { rows } = await db.query<{ matches: boolean }>(
    `SELECT ${filtersMatch("w", "g")} AS matches
       FROM webhooks w, (SELECT $3::jsonb AS subject) g
      WHERE w.project_id = $1 AND w.id = $2`,
    [webhook.project_id, webhook.id, JSON.stringify(subject)],
  );
  return rows[0]?.matches === true;
}

export async function checkFilters(
  db: Queryable,
  webhook: WebhookRow,
  eventType: string,
  subject: FilterSubject,
): Promise<FilterCheck> {
  const reasons: string[] = [];
  if (!webhook.enabled) reasons.push("the webhook is disabled: enable it to get events");
  if (!webhook.events.includes(eventType)) {
    reasons.push(`it is not subscribed to ${eventType} (its events: ${webhook.events.join(", ")})`);
  }
  if (!(await filtersLetThrough(db, webhook, subject))) {
    const why = filterReasons(webhook.filters, subject);
    reasons.push(...(why.length > 0 ? why : ["its filters leave this event out"]));
  }
  return { event_type: eventType, would_deliver: reasons.length === 0, reasons };
}
