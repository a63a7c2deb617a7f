import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { addRoute } from "../http/route.js";
import { checkFilters } from "./filter-check.js";
import { filterCheckBody, filterCheckSchema } from "./filter-check-schemas.js";
import { webhookParams } from "./schemas.js";
import { requireWebhook } from "./service.js";

// POST …/webhooks/{webhook_id}/filter-check: would the webhook get this event of this workload? The
// bounds are the filters' own, so anything a filter can name can be tried; nothing is sent or stored.

export function registerFilterCheckRoute(router: Router, registry: OpenAPIRegistry, pool: Pool): void {
  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/filter-check",
    tag: "Webhooks",
    operationId: "checkWebhookFilters",
    summary: "Check whether the webhook would get an event of an example workload",
    description:
      "Decides as a rollout's event is decided (the webhook's enabled flag, its events and its filters, " +
      "by the rules a recorded event is matched with), for an event of `event_type` (default deployment.succeeded) from the " +
      "example `workload` (kind, labels, environment; each left out is one the event does not name), and " +
      "says why not. Sends nothing and records nothing: filters can be tried without a cluster.",
    params: webhookParams,
    body: filterCheckBody,
    responses: { 200: { description: "The verdict and its reasons", schema: filterCheckSchema } },
    handler: async ({ params, body, auth }) => {
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      // What the workload leaves out is what an event does not name (null): a filter on it fails.
      const { kind, labels, environment } = body.workload ?? {};
      const subject = { environment: environment ?? null, kind: kind ?? null, labels: labels ?? null };
      return { status: 200, body: checkFilters(webhook, body.event_type, subject) };
    },
  });
}
