import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { eventTypes } from "../event-types.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { projectParams } from "../http/schemas.js";
import { requireProject } from "../projects/access.js";
import { registerFilterCheckRoute } from "./filter-check-routes.js";
import { toWebhookJson } from "./presenter.js";
import type { PreviewAdmission } from "./preview-admission.js";
import { registerPreviewRoutes } from "./preview-routes.js";
import {
  eventTypeSchema,
  listWebhooksQuery,
  webhookPageSchema,
  webhookParams,
  webhookSchema,
} from "./schemas.js";
import { assertNotOwnedByResource, removeWebhook, requireWebhook } from "./service.js";
import { listWebhooks, listWebhooksPage } from "./store.js";
import { addCreateWebhookRoute, addUpdateWebhookRoute, type WebhookWriteOptions } from "./write-routes.js";

const tag = "Webhooks";
const pageSizeDefault = 20;

export function registerWebhookRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  options: WebhookWriteOptions & { previews: PreviewAdmission },
): void {
  // Registered in this order, which is the order of the operations in the OpenAPI document.
  registerPreviewRoutes(router, registry, pool, options.secrets, options.previews);
  registerFilterCheckRoute(router, registry, pool);
  addRoute(router, registry, {
    method: "get",
    path: "/webhook-event-types",
    tag,
    operationId: "listEventTypes",
    summary: "List the event types a webhook can subscribe to",
    description:
      "Every event name a webhook may subscribe to, with its category and a description. Only the " +
      "`deployment.*` events (category `Deployment`) are emitted in this release; the others are accepted " +
      "in subscriptions and never fire.",
    responses: { 200: { description: "Event type descriptors", schema: z.array(eventTypeSchema) } },
    handler: async () => ({
      status: 200,
      body: eventTypes.map(({ event_type, description, category }) => ({
        event_type,
        description,
        category,
      })),
    }),
  });

  addCreateWebhookRoute(router, registry, pool, options);

  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks",
    tag,
    operationId: "listWebhooks",
    summary: "List a project's webhooks, newest first",
    description:
      "Without `page` and `page_size`: a bare array of every webhook of the project. With either: one page " +
      "in the envelope `{data, total, page, page_size}` (`page_size` defaults to 20 and is clamped to 1–100).",
    params: projectParams,
    query: listWebhooksQuery,
    responses: {
      200: {
        description: "All webhooks, or one page of them",
        schema: z.union([z.array(webhookSchema), webhookPageSchema]),
      },
    },
    handler: async ({ params, query, auth }) => {
      await requireProject(pool, auth, params.project_id);
      if (query.page === undefined && query.page_size === undefined) {
        return { status: 200, body: (await listWebhooks(pool, params.project_id)).map(toWebhookJson) };
      }
      const page = { page: query.page ?? 1, size: query.page_size ?? pageSizeDefault };
      const { rows, total } = await listWebhooksPage(pool, params.project_id, page);
      return {
        status: 200,
        body: { data: rows.map(toWebhookJson), total, page: page.page, page_size: page.size },
      };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks/{webhook_id}",
    tag,
    operationId: "getWebhook",
    summary: "Get a webhook",
    description: "The webhook, without its secret. A webhook of another project answers 404.",
    params: webhookParams,
    responses: { 200: { description: "The webhook", schema: webhookSchema } },
    handler: async ({ params, auth }) => ({
      status: 200,
      body: toWebhookJson(await requireWebhook(pool, auth, params.project_id, params.webhook_id)),
    }),
  });

  addUpdateWebhookRoute(router, registry, pool, options);

  addRoute(router, registry, {
    method: "delete",
    path: "/projects/{project_id}/webhooks/{webhook_id}",
    tag,
    operationId: "deleteWebhook",
    summary: "Delete a webhook",
    description:
      "Deletes the webhook with all its delivery records, queued deliveries and waiting retries. A webhook " +
      "declared by a Kubernetes Webhook resource answers 409: delete the resource instead.",
    params: webhookParams,
    responses: {
      204: { description: "Deleted" },
      409: { description: "The webhook is managed by a Kubernetes Webhook resource" },
    },
    handler: async ({ params, auth }) => {
      assertNotOwnedByResource(await requireWebhook(pool, auth, params.project_id, params.webhook_id));
      await removeWebhook(pool, params.project_id, params.webhook_id);
      return { status: 204 };
    },
  });
}
