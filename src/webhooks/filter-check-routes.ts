import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { checkFilters } from "./filter-check.js";
import { filterLimits } from "./filter-rules.js";
import { previewBody } from "./preview-schemas.js";
import { webhookParams } from "./schemas.js";
import { requireWebhook } from "./service.js";

// POST …/webhooks/{webhook_id}/filter-check: would the webhook get this event of this workload? The
// bounds are the filters' own, so anything a filter can name can be tried; nothing is sent or stored.

const maxWorkloadLabels = 64;

const workload = z
  .strictObject(
    {
      kind: z
        .string({ error: "workload.kind must be a string" })
        .max(63, "workload.kind must be at most 63 characters")
        .optional()
        .openapi({ description: "Deployment, StatefulSet or DaemonSet; left out: the event names none" }),
      labels: z
        .record(
          z.string().max(317, "a workload label key must be at most 317 characters"),
          z
            .string({ error: "each workload label value must be a string" })
            .max(
              filterLimits.labelNameLength,
              `a workload label value must be at most ${filterLimits.labelNameLength} characters`,
            ),
          { error: 'workload.labels must be an object {"label": "value"}' },
        )
        .refine((labels) => Object.keys(labels).length <= maxWorkloadLabels, {
          error: `workload.labels must have at most ${maxWorkloadLabels} labels`,
        })
        .optional()
        .openapi({ description: "The workload's labels; left out: the event names none" }),
      environment: z
        .string({ error: "workload.environment must be a string" })
        .max(
          filterLimits.environmentLength,
          `workload.environment must be at most ${filterLimits.environmentLength} characters`,
        )
        .optional()
        .openapi({ description: "The rollout's environment (the payload's environment); left out: none" }),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? undefined
          : "workload must be an object {kind, labels, environment}",
    },
  )
  .openapi("ExampleWorkload");

export const filterCheckBody = z
  .strictObject({ event_type: previewBody.shape.event_type, workload: workload.default({}) })
  .openapi("FilterCheckRequest");

export const filterCheckSchema = z
  .object({
    event_type: z.string(),
    would_deliver: z.boolean(),
    reasons: z.array(z.string()).openapi({
      description:
        "Why it would not (disabled, not subscribed, each filter that leaves it out); empty when it would",
    }),
  })
  .openapi("FilterCheck");

export function registerFilterCheckRoute(router: Router, registry: OpenAPIRegistry, pool: Pool): void {
  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/filter-check",
    tag: "Webhooks",
    operationId: "checkWebhookFilters",
    summary: "Check whether the webhook would get an event of an example workload",
    description:
      "Decides as a rollout's event is decided (the webhook's enabled flag, its events and its filters, " +
      "matched by the same SQL), for an event of `event_type` (default deployment.succeeded) from the " +
      "example `workload` (kind, labels, environment; each left out is one the event does not name), and " +
      "says why not. Sends nothing and records nothing: filters can be tried without a cluster.",
    params: webhookParams,
    body: filterCheckBody,
    responses: { 200: { description: "The verdict and its reasons", schema: filterCheckSchema } },
    handler: async ({ params, body, auth }) => {
      const webhook = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      // What the workload leaves out is what an event does not name (null): a filter on it fails.
      const { kind, labels, environment } = body.workload;
      const subject = { environment: environment ?? null, kind: kind ?? null, labels: labels ?? null };
      return { status: 200, body: await checkFilters(pool, webhook, body.event_type, subject) };
    },
  });
}
