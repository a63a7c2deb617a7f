import type { FilterSubject } from "../delivery-engine/event-filters.js";
import { filterReasons } from "./filter-reasons.js";
import type { WebhookRow } from "./store.js";

// Whether a webhook would get an event of an example workload, and why not (docs/api.md, "Checking
// filters"): a filter can be tried without a cluster. The rules are the emit statement's
// (delivery-engine/sql/emit-events.sql), put in words part by part; filter-check.test.ts records a real
// event of each example workload through the emit statement and checks that the two agree.

export interface FilterCheck {
  event_type: string;
  would_deliver: boolean;
  reasons: string[];
}

export function checkFilters(webhook: WebhookRow, eventType: string, subject: FilterSubject): FilterCheck {
  const reasons: string[] = [];
  if (!webhook.enabled) reasons.push("the webhook is disabled: enable it to get events");
  if (!webhook.events.includes(eventType)) {
    reasons.push(`it is not subscribed to ${eventType} (its events: ${webhook.events.join(", ")})`);
  }
  reasons.push(...filterReasons(webhook.filters, subject));
  return { event_type: eventType, would_deliver: reasons.length === 0, reasons };
}
