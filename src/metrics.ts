import client from "prom-client";

// Every metric the operator exports, defined in one place. Labels are bounded: event types are a fixed
// list, outcomes and reasons are enums, webhook_id is bounded by the number of webhooks. Never URLs,
// secrets, or ids of unbounded sets (deliveries, events).
//
// Two views of one set of metrics. `registry` has the delivery counts per webhook (webhook_id), for a
// scraper that presents METRICS_TOKEN; `registryWithoutWebhookIds` has the same counts summed over
// webhooks, for a /metrics anyone who reaches the port may read: webhook ids belong to their projects
// (the API never shows them to another project), and their series grow with every webhook.
const shared = new client.Registry();
client.collectDefaultMetrics({ register: shared });
const perWebhook = new client.Registry();
const overWebhooks = new client.Registry();

const prefix = "webhook_operator_";
// Delivery latency, in seconds as Prometheus names its base unit: a millisecond on loopback to 30 s at
// the timeout.
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const metrics = {
  deliveries: new client.Counter({
    name: `${prefix}deliveries_total`,
    help: "Delivery attempts by outcome (success|failure), failure reason and event type, per webhook",
    labelNames: ["webhook_id", "event_type", "outcome", "reason"] as const,
    registers: [perWebhook],
  }),
  /** The same counts without webhook_id: what /metrics shows without METRICS_TOKEN. */
  deliveriesOverWebhooks: new client.Counter({
    name: `${prefix}deliveries_total`,
    help: "Delivery attempts by outcome (success|failure), failure reason and event type",
    labelNames: ["event_type", "outcome", "reason"] as const,
    registers: [overWebhooks],
  }),
  deliveryDuration: new client.Histogram({
    name: `${prefix}delivery_duration_seconds`,
    help: "Time from sending a delivery to its outcome, in seconds",
    labelNames: ["outcome"] as const,
    buckets: latencyBuckets,
    registers: [shared],
  }),
  deliveryLag: new client.Histogram({
    name: `${prefix}delivery_lag_seconds`,
    help: "Time from a delivery attempt being queued (its event recorded, its retry due, its recovery asked for) to its start, in seconds",
    buckets: latencyBuckets,
    registers: [shared],
  }),
  inFlight: new client.Gauge({
    name: `${prefix}deliveries_in_flight`,
    help: "Deliveries being sent by this replica right now",
    registers: [shared],
  }),
  deliverySendsStuck: new client.Gauge({
    name: `${prefix}delivery_sends_stuck`,
    help: "Sends of this replica's worker open past twice the longest a send can take: 0 unless a slot was lost (then /readyz answers 503)",
    registers: [shared],
  }),
  replays: new client.Counter({
    name: `${prefix}delivery_replays_total`,
    help: "Manual replays (POST .../deliveries/{id}/replay) by outcome",
    labelNames: ["outcome"] as const,
    registers: [shared],
  }),
  testEvents: new client.Counter({
    name: `${prefix}test_events_total`,
    help: "Test events sent through the test-event endpoint, by outcome",
    labelNames: ["outcome"] as const,
    registers: [shared],
  }),
  synchronousSendsRefused: new client.Counter({
    name: `${prefix}synchronous_sends_refused_total`,
    help: "Test events and replays answered 429, by the bound they would have gone over",
    labelNames: ["limit"] as const,
    registers: [shared],
  }),
  previewsRefused: new client.Counter({
    name: `${prefix}previews_refused_total`,
    help: "Previews answered 429, by the bound they would have gone over",
    labelNames: ["limit"] as const,
    registers: [shared],
  }),
  eventsEmitted: new client.Counter({
    name: `${prefix}events_emitted_total`,
    help: "Events recorded, by event type",
    labelNames: ["event_type"] as const,
    registers: [shared],
  }),
  authentications: new client.Counter({
    name: `${prefix}api_authentications_total`,
    help: "/api authentications by method (api_key|kubernetes_token) and outcome (success|rejected|unavailable)",
    labelNames: ["method", "outcome"] as const,
    registers: [shared],
  }),
  reconciles: new client.Counter({
    name: `${prefix}reconciles_total`,
    help: "Reconciles by controller and result (success|config_error|error)",
    labelNames: ["controller", "result"] as const,
    registers: [shared],
  }),
  reconcileDuration: new client.Histogram({
    name: `${prefix}reconcile_duration_seconds`,
    help: "Time spent in one reconcile, in seconds",
    labelNames: ["controller"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [shared],
  }),
  watchRestarts: new client.Counter({
    name: `${prefix}watch_restarts_total`,
    help: "Informer restarts by resource and reason (error: the watch failed; relist: the periodic re-list)",
    labelNames: ["resource", "reason"] as const,
    registers: [shared],
  }),
  leader: new client.Gauge({
    name: `${prefix}leader`,
    help: "1 while this replica holds the leader lease and runs the controllers, else 0",
    registers: [shared],
  }),
  queueDepth: new client.Gauge({
    name: `${prefix}delivery_queue_depth`,
    help: "Deliveries recorded but not yet finished (queued or in flight), across all replicas",
    registers: [shared],
  }),
  retentionRemoved: new client.Counter({
    name: `${prefix}retention_removed_total`,
    help: "Rows removed by retention (RETENTION_DAYS), by table (deliveries|events)",
    labelNames: ["table"] as const,
    registers: [shared],
  }),
  retriesScheduled: new client.Counter({
    name: `${prefix}delivery_retries_scheduled_total`,
    help: "Automatic retries scheduled after failed attempts (webhooks with a retry policy)",
    registers: [shared],
  }),
  retriesWaiting: new client.Gauge({
    name: `${prefix}delivery_retries_waiting`,
    help: "Automatic retries waiting to be queued, across all replicas (not in the queue depth)",
    registers: [shared],
  }),
  webhooksAutoDisabled: new client.Counter({
    name: `${prefix}webhooks_auto_disabled_total`,
    help: "Webhooks disabled automatically after a run of failed deliveries (webhooks with auto_disable)",
    registers: [shared],
  }),
  // Pace (docs/deliveries.md): a throttled webhook shows here, not among failed deliveries.
  webhookThrottled: new client.Counter({
    name: `${prefix}webhook_throttled_total`,
    help: "Sends a receiver answered with 429 or 503 and Retry-After: its webhook paused, the delivery queued again",
    labelNames: ["reason"] as const,
    registers: [shared],
  }),
  webhooksThrottled: new client.Gauge({
    name: `${prefix}webhooks_throttled`,
    help: "Webhooks whose sends are paused now by their receiver's Retry-After, across all replicas",
    registers: [shared],
  }),
  queueOldestAge: new client.Gauge({
    name: `${prefix}delivery_queue_oldest_age_seconds`,
    help: "Age of the oldest unfinished delivery, in seconds (0 when the queue is empty)",
    registers: [shared],
  }),
};

/** Every metric, delivery counts per webhook: for a scraper with METRICS_TOKEN. */
export const registry = client.Registry.merge([shared, perWebhook]);
/** Every metric, delivery counts summed over webhooks: no webhook ids. */
export const registryWithoutWebhookIds = client.Registry.merge([shared, overWebhooks]);

/** Counts one delivery attempt in both views. */
export function countDelivery(labels: {
  webhook_id: string;
  event_type: string;
  outcome: "success" | "failure";
  reason: string;
}): void {
  metrics.deliveries.inc(labels);
  const { webhook_id: _id, ...overWebhookLabels } = labels;
  metrics.deliveriesOverWebhooks.inc(overWebhookLabels);
}

/**
 * Drops a deleted webhook's series so the webhook_id label stays bounded by the webhooks that exist.
 * Only this replica's series go: another replica drops its own when it next restarts.
 */
export async function forgetWebhookSeries(webhookId: number): Promise<void> {
  const id = String(webhookId);
  const { values } = await metrics.deliveries.get();
  for (const { labels } of values) {
    if (labels.webhook_id === id) metrics.deliveries.remove(labels);
  }
}
