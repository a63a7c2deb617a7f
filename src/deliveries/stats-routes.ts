import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { addRoute } from "../http/route.js";
import { iso } from "../http/schemas.js";
import { webhookParams } from "../webhooks/schemas.js";
import { requireWebhook } from "../webhooks/service.js";
import { deliveryStatsQuery, deliveryStatsSchema } from "./schemas.js";
import { bucketOf, deliveryStats } from "./stats-store.js";
import { findLastDelivery } from "./store.js";

/** An addition to the spec: delivery health over time, for the dashboard's chart and table. */
export function registerDeliveryStatsRoutes(router: Router, registry: OpenAPIRegistry, pool: Pool): void {
  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks/{webhook_id}/stats",
    tag: "Deliveries",
    operationId: "getDeliveryStats",
    summary: "Count a webhook's succeeded and failed attempts over time",
    description:
      "Succeeded and failed attempts per hour for the last 24 hours (`range=24h`, the default: 24 buckets " +
      "ending with the current hour) or per UTC day for the last 30 days (`range=30d`), oldest first, " +
      "every bucket present, with the totals and the newest attempt (`last_delivery`, null when none).",
    params: webhookParams,
    query: deliveryStatsQuery,
    responses: { 200: { description: "Delivery health", schema: deliveryStatsSchema } },
    handler: async ({ params, query, auth }) => {
      await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      const [buckets, last] = await Promise.all([
        deliveryStats(pool, params.webhook_id, query.range),
        findLastDelivery(pool, params.webhook_id),
      ]);
      return {
        status: 200,
        body: {
          range: query.range,
          bucket: bucketOf(query.range),
          buckets: buckets.map((b) => ({ start: iso(b.start), succeeded: b.succeeded, failed: b.failed })),
          succeeded: buckets.reduce((sum, b) => sum + b.succeeded, 0),
          failed: buckets.reduce((sum, b) => sum + b.failed, 0),
          last_delivery: last
            ? {
                id: last.id,
                event_type: last.event_type,
                success: last.success,
                status_code: last.status_code,
                delivered_at: iso(last.delivered_at),
              }
            : null,
        },
      };
    },
  });
}
