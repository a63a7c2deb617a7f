import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { deliveryHeaders } from "../delivery-engine/delivery-headers.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { ConflictError } from "../errors.js";
import { nextLinkHeader } from "../http/link-header.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { iso } from "../http/schemas.js";
import { webhookParams } from "../webhooks/schemas.js";
import { requireWebhook } from "../webhooks/service.js";
import type { WebhookRow } from "../webhooks/store.js";
import { maskUrlIn } from "../webhooks/url-secret.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { deliveryNotFound } from "./not-found.js";
import { queueRecovery, recoveryLimit } from "./recovery.js";
import { replayDelivery } from "./replay.js";
import {
  deliveryParams,
  deliverySchema,
  listDeliveriesQuery,
  recoverBody,
  recoverResultSchema,
  retryResultSchema,
} from "./schemas.js";
import { refuseEarly } from "./send-admission.js";
import type { DeliveryRecordRow } from "./store.js";
import { findDeliveryRecord, listDeliveryRecords } from "./store.js";

const tag = "Deliveries";

/** A delivery record as the API shows it; a secret URL of its webhook is masked in its error. */
export function toDeliveryJson(row: DeliveryRecordRow, webhook: Pick<WebhookRow, "url" | "url_secret">) {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_type: row.event_type,
    event_id: row.event_id,
    payload: row.payload,
    success: row.success,
    status_code: row.status_code,
    response_body: row.response_body,
    error_message: maskUrlIn(row.error_message, webhook),
    attempt_number: row.attempt_number,
    created_at: iso(row.created_at),
    delivered_at: iso(row.delivered_at),
    request_headers: requestHeaders(row),
    duration_ms: row.duration_ms,
  };
}

/**
 * The headers exactly as the attempt sent them (the sender's own builder); null when it sent no request
 * (a refused destination) or was recorded before the timestamp and signature were kept (migration 009).
 */
function requestHeaders(row: DeliveryRecordRow): Record<string, string> | null {
  if (row.request_timestamp === null) return null;
  // A webhook with a format, signature scheme or custom headers kept its headers as sent (masked).
  if (row.request_headers !== null) return row.request_headers;
  return deliveryHeaders({
    eventType: row.event_type,
    deliveryId: row.id,
    timestamp: row.request_timestamp,
    signature: row.signature,
  });
}

export function registerDeliveryRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  engine: DeliveryEngine,
): void {
  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks/{webhook_id}/deliveries",
    tag,
    operationId: "listDeliveries",
    summary: "List a webhook's delivery attempts, newest first",
    description:
      "A bare array of at most `limit` finished attempts (default 50, clamped to 1–100), filtered by " +
      '`success` and `event_type`. When older attempts remain, a `Link: <…>; rel="next"` header holds the ' +
      "next page's address (same limit and filters, and an opaque `cursor`); the last page has none. Pages " +
      "do not shift when new attempts are recorded meanwhile.",
    params: webhookParams,
    query: listDeliveriesQuery,
    responses: {
      200: {
        description: 'Delivery records; the Link header (rel="next") is present when more remain',
        schema: z.array(deliverySchema),
        headers: {
          Link: {
            description:
              '`<address>; rel="next"`: the next (older) page with the same limit and filters; absent on the ' +
              "last page. The address is the list's own path from the service's root (`/api/…`, joined to the " +
              "server URL like any path here), with its query: the `cursor` parameter in it is what a generated " +
              "client passes as `cursor` (with the same `limit` and filters) for the next page.",
            schema: {
              type: "string",
              pattern: '^</api/[^>]*[?&]cursor=[0-9]+-[0-9]+(&[^>]*)?>; rel="next"$',
              example: '</api/projects/1/webhooks/2/deliveries?limit=50&cursor=1795390000000-42>; rel="next"',
            },
          },
        },
      },
    },
    handler: async ({ params, query, auth, req }) => {
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      // One row more than asked tells whether a next page exists without a count.
      const rows = await listDeliveryRecords(pool, params.webhook_id, {
        limit: query.limit + 1,
        before,
        success: query.success,
        eventType: query.event_type,
      });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      const cursor =
        rows.length > query.limit && last
          ? encodeCursor({ createdAt: last.created_at, id: last.id })
          : undefined;
      const headers = cursor ? { Link: nextLinkHeader(nextPageAddress(req.originalUrl, cursor)) } : undefined;
      return {
        status: 200,
        body: page.map((row) => toDeliveryJson(row, webhook)),
        ...(headers ? { headers } : {}),
      };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}",
    tag,
    operationId: "getDelivery",
    summary: "Get one delivery attempt",
    description:
      "The attempt with the envelope exactly as sent (`payload`), the request headers as sent, and the " +
      "receiver's answer. `status_code` is 0 when no HTTP response came.",
    params: deliveryParams,
    responses: { 200: { description: "The delivery record", schema: deliverySchema } },
    handler: async ({ params, auth }) => {
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      const row = await findDeliveryRecord(pool, params.webhook_id, params.delivery_id);
      if (!row) throw deliveryNotFound(params.delivery_id, params.webhook_id);
      return { status: 200, body: toDeliveryJson(row, webhook) };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/recover",
    tag,
    operationId: "recoverFailedDeliveries",
    summary: "Send again every event whose latest attempt failed in a time window",
    description:
      "Queues a new attempt of every event whose latest attempt failed, among the events with a failed " +
      "attempt created from `since` to `until` (default: now), of `event_type` if given: the workers send " +
      "them as they do any delivery. Answers at once with how many were queued (at most 10,000: call again " +
      "for the rest); events with an attempt already queued or waiting are skipped, so recovering twice " +
      "sends nothing twice. A disabled webhook answers 409.",
    params: webhookParams,
    body: recoverBody,
    responses: {
      202: { description: "How many events were queued", schema: recoverResultSchema },
      409: { description: "The webhook is disabled" },
    },
    handler: async ({ params, body, auth }) => {
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      if (!webhook.enabled) {
        throw new ConflictError(
          `Webhook ${webhook.id} is disabled; enable it before recovering its deliveries.`,
        );
      }
      const until = body.until ?? new Date();
      const queued = await queueRecovery(pool, webhook.id, {
        since: body.since,
        until,
        eventType: body.event_type,
      });
      if (queued > 0) engine.wake();
      return {
        status: 202,
        body: {
          queued,
          since: iso(body.since),
          until: iso(until),
          event_type: body.event_type ?? null,
          limit: recoveryLimit,
        },
      };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
    tag,
    operationId: "retryDelivery",
    summary: "Send a delivery's event again and return the outcome",
    description:
      "Sends the stored envelope again, byte for byte, to the webhook's current URL with its current " +
      "secret, as a new delivery record with the same event id and `attempt_number` one above the " +
      "event's highest; waits for the receiver and returns the outcome. Successful deliveries may be sent " +
      "again too. A disabled webhook answers 409 and nothing is sent. Over the bounds of test events and " +
      "replays (in flight, pace) it answers 429 with `Retry-After`, and nothing is sent or recorded.",
    params: deliveryParams,
    responses: {
      200: { description: "The outcome of the new attempt", schema: retryResultSchema },
      409: { description: "The webhook is disabled" },
      410: { description: "The event was removed by retention while this replay was being written" },
      429: {
        description:
          "Over a bound of test events and replays (the project's share in flight, the webhook's or the replica's, or the project's pace); `Retry-After` says when to ask again, and nothing was recorded",
        headers: { "Retry-After": { description: "Seconds to wait before asking again" } },
      },
    },
    handler: async ({ params, auth }) => {
      refuseEarly(engine, auth, params.project_id, params.webhook_id);
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      const result = await replayDelivery(pool, engine, webhook, params.delivery_id);
      return { status: 200, body: { ...result, error_message: maskUrlIn(result.error_message, webhook) } };
    },
  });
}

/**
 * The request's own path and query (so limit and the filters carry over) with the cursor replaced. A
 * relative reference (RFC 8288 §3.1): it resolves against the address the client used, whatever
 * proxy or port-forward stands in front.
 */
function nextPageAddress(originalUrl: string, cursor: string): string {
  const url = new URL(originalUrl, "http://service.invalid");
  url.searchParams.set("cursor", cursor);
  return `${url.pathname}${url.search}`;
}
