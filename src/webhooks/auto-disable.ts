import type { OutcomePolicy } from "../delivery-engine/outcome-policy.js";
import { metrics } from "../metrics.js";

// Auto-disable (docs/deliveries.md, "Retry policy and auto-disable"): a webhook that opted in is
// disabled once `after_failures` deliveries in a row failed, the first of them at least
// `min_duration_seconds` ago, or at once when its receiver answers 410 Gone, with the reason recorded
// for its owner. The rule runs inside the delivery engine's statement that records the outcomes
// (delivery-engine/sql/record-outcomes.sql: `tallies`, `runs`, `counted`), so a failure and what it
// does to its webhook commit together, in the worker's one round trip; the worker learns here which
// webhooks it disabled.

/** Postgres NOTIFY channel naming the webhooks a worker just disabled automatically (ids, comma-separated). */
export const webhooksDisabledChannel = "webhook_operator_webhooks_disabled";

/** How the reason of a webhook disabled by a 410 Gone begins (the Webhook resource's condition tells it apart). */
export const goneReasonStart = "Disabled automatically: the receiver answered 410 Gone";

export const autoDisablePolicy: OutcomePolicy = {
  disabledChannel: webhooksDisabledChannel,
  onDisabled: (webhookIds) => metrics.webhooksAutoDisabled.inc(webhookIds.length),
};
