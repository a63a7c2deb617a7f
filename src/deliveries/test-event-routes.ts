import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { eventTypes } from "../event-types.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { webhookParams } from "../webhooks/schemas.js";
import { requireProjectWebhook } from "../webhooks/service.js";
import { maskUrlIn } from "../webhooks/url-secret.js";
import { testEventResultSchema } from "./schemas.js";
import { refuseEarly } from "./send-admission.js";
import { sendTestEvent } from "./test-event.js";

const testableTypes = eventTypes.filter((type) => type.emitted).map((type) => type.event_type) as [
  "deployment.created",
  ...("deployment.ready" | "deployment.succeeded" | "deployment.failed" | "deployment.cancelled")[],
];

const testEventBody = z
  .strictObject({
    event_type: z
      .enum(testableTypes, {
        error: (issue) =>
          `event_type ${JSON.stringify(issue.input)} cannot be sent as a test event; use one of: ${testableTypes.join(", ")}`,
      })
      .default("deployment.succeeded")
      .openapi({ description: "Default deployment.succeeded" }),
  })
  .openapi("TestEventRequest");

/**
 * An addition to the spec: sends an example envelope to the webhook now, recorded as a delivery like
 * any other, so a receiver can be checked before a real rollout happens. Works on disabled webhooks
 * and regardless of the subscription: it is an explicit request.
 */
export function registerTestEventRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  engine: DeliveryEngine,
): void {
  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/test",
    tag: "Webhooks",
    operationId: "sendTestEvent",
    summary: "Send a test event to the webhook now",
    description:
      "Sends an example envelope of `event_type` (one of the five `deployment.*` types, default " +
      "`deployment.succeeded`) to the webhook, waits for the receiver and returns the outcome. The payload " +
      "names the real project, with `deployment_id` 0 and environment `test`. Recorded as a delivery like " +
      "any other; works on disabled webhooks and whatever the subscription. The body may be left out, " +
      "be empty with `Content-Type: application/json`, or be JSON null: each is taken as {}. Over the bounds of test events and replays (in " +
      "flight, pace) it answers 429 with `Retry-After`, and nothing is sent or recorded.",
    params: webhookParams,
    body: testEventBody,
    // `curl -X POST …/test` with nothing sends a deployment.succeeded: every field has a default.
    bodyOptional: true,
    responses: {
      200: { description: "The outcome of the test delivery", schema: testEventResultSchema },
      429: {
        description:
          "Over a bound of test events and replays (the project's share in flight, the webhook's or the replica's, or the project's pace); `Retry-After` says when to ask again, and nothing was recorded",
        headers: { "Retry-After": { description: "Seconds to wait before asking again" } },
      },
    },
    handler: async ({ params, body, auth }) => {
      refuseEarly(engine, auth, params.project_id, params.webhook_id);
      const { project, webhook } = await requireProjectWebhook(
        pool,
        auth,
        params.project_id,
        params.webhook_id,
      );
      const result = await sendTestEvent(pool, engine, project, webhook, body.event_type);
      return { status: 200, body: { ...result, error_message: maskUrlIn(result.error_message, webhook) } };
    },
  });
}
