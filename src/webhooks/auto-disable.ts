import type { OutcomePolicy } from "../delivery-engine/outcome-policy.js";
import { metrics } from "../metrics.js";

// Auto-disable (docs/deliveries.md, "Retry policy and auto-disable"): a webhook that opted in is
// disabled once `after_failures` deliveries in a row failed, the first of them at least
// `min_duration_seconds` ago, with the reason recorded for its owner. The rule runs inside the
// delivery engine's statement that records the outcomes (an OutcomePolicy), so a failure and what it
// does to its webhook commit together, in the worker's one round trip.

/** Postgres NOTIFY channel naming the webhooks a worker just disabled automatically (ids, comma-separated). */
export const webhooksDisabledChannel = "webhook_operator_webhooks_disabled";

// consecutive_failures and failing_since after this batch, per webhook: a success in the batch restarts
// the run (only failures after the batch's last success count), otherwise the batch's failures extend it.
const failuresAfter = `CASE WHEN t.last_success IS NULL THEN w.consecutive_failures ELSE 0 END + t.failures`;
const failingSince = `CASE WHEN t.failures = 0 THEN NULL
       WHEN t.last_success IS NULL AND w.consecutive_failures > 0 THEN COALESCE(w.failing_since, t.first_failure)
       ELSE t.first_failure END`;
const reachesLimit = `w.enabled AND ${failuresAfter} >= w.auto_disable_after_failures
       AND ${failingSince} <= clock_timestamp() - w.auto_disable_min_seconds * interval '1 second'`;
// A receiver answering 410 Gone asks for no more deliveries (Standard Webhooks): a webhook that opted
// into auto-disable is disabled at once, whatever its run of failures.
const gone = "w.enabled AND t.gone";
/** How the reason of a webhook disabled by a 410 Gone begins (the Webhook resource's condition tells it apart). */
export const goneReasonStart = "Disabled automatically: the receiver answered 410 Gone";
const disables = `(${reachesLimit}) OR (${gone})`;
const disabledReason = `CASE WHEN ${gone} THEN
             '${goneReasonStart}, which asks for no more deliveries (auto_disable). Enable the webhook again once its receiver wants them.'
           ELSE format(
             'Disabled automatically: %s deliveries in a row failed since %s (auto_disable: after %s failures over at least %s s). Enable the webhook again once its receiver works.',
             ${failuresAfter}, to_char((${failingSince}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             w.auto_disable_after_failures, w.auto_disable_min_seconds) END`;

/**
 * - tallies: each webhook's failures in the batch after its last success in the batch.
 * - counted: the run of failures of webhooks with auto-disable on; a webhook whose run reached
 *   after_failures and lasted min_duration_seconds, or whose receiver answered 410 Gone, is disabled,
 *   with the reason recorded.
 * - disabled: those this batch disabled (they were enabled when the batch began).
 */
export const autoDisablePolicy: OutcomePolicy = {
  appliesTo: "w.auto_disable_after_failures IS NOT NULL",
  ctes: `last_successes AS (
    SELECT webhook_id, max(delivered_at) FILTER (WHERE success) AS last_success
      FROM recorded WHERE counted GROUP BY webhook_id
  ), tallies AS (
    SELECT r.webhook_id, s.last_success,
           count(*) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity'))::int AS failures,
           min(r.delivered_at) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity')) AS first_failure,
           COALESCE(bool_or(r.status_code = 410) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity')), false) AS gone
      FROM recorded r JOIN last_successes s USING (webhook_id)
     WHERE r.counted
     GROUP BY r.webhook_id, s.last_success
  ), counted AS (
    UPDATE webhooks w
       SET consecutive_failures = ${failuresAfter},
           failing_since = ${failingSince},
           enabled = w.enabled AND NOT (${disables}),
           disabled_reason = CASE WHEN ${disables} THEN ${disabledReason} ELSE w.disabled_reason END,
           disabled_at = CASE WHEN ${disables} THEN clock_timestamp() ELSE w.disabled_at END,
           updated_at = CASE WHEN ${disables}
                             THEN greatest(clock_timestamp(), w.updated_at + interval '1 millisecond')
                             ELSE w.updated_at END
      FROM tallies t
      JOIN policies p ON p.id = t.webhook_id -- rows locked in id order first
     WHERE w.id = t.webhook_id AND w.auto_disable_after_failures IS NOT NULL
       AND (t.failures > 0 OR w.consecutive_failures > 0)
    RETURNING w.id, w.enabled
  ), disabled AS (
    SELECT id FROM counted WHERE NOT enabled AND id IN (SELECT id FROM policies WHERE enabled)
  )`,
  disabledChannel: webhooksDisabledChannel,
  onDisabled: (webhookIds) => metrics.webhooksAutoDisabled.inc(webhookIds.length),
};
