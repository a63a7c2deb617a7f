import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import { NotFoundError } from "../http/errors.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { projectParams } from "../http/schemas.js";
import { eventTypes } from "./event-types.js";
import {
  createWebhookBody,
  eventTypeSchema,
  listWebhooksQuery,
  updateWebhookBody,
  webhookPageSchema,
  webhookParams,
  webhookSchema,
} from "./schemas.js";
import {
  assertDestinationAllowed,
  assertNotOwnedByResource,
  policyChanges,
  requireProject,
  requireWebhook,
  toWebhookJson,
  webhookLimitReached,
} from "./service.js";
import {
  deleteWebhook,
  insertWebhookWithinLimit,
  listWebhooks,
  listWebhooksPage,
  updateWebhook,
} from "./store.js";

const tag = "Webhooks";
const pageSizeDefault = 20;

export function registerWebhookRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  rules: { destinationPolicy: DestinationPolicy; perProjectLimit: number },
): void {
  const { destinationPolicy, perProjectLimit } = rules;
  addRoute(router, registry, {
    method: "get",
    path: "/webhook-event-types",
    tag,
    summary: "List every event type a webhook can subscribe to (endpoint 1)",
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

  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks",
    tag,
    summary: "Create a webhook (endpoint 2)",
    params: projectParams,
    body: createWebhookBody,
    responses: {
      201: { description: "The created webhook", schema: webhookSchema },
      403: { description: "The url's IP address is a destination deliveries may not reach" },
      409: {
        description: "The project has as many webhooks as a project may have (WEBHOOKS_PER_PROJECT_LIMIT)",
      },
    },
    handler: async ({ params, body, auth }) => {
      await requireProject(pool, auth, params.project_id);
      assertDestinationAllowed(body.url, destinationPolicy);
      const changes = policyChanges(body);
      const row = await insertWebhookWithinLimit(pool, perProjectLimit, {
        projectId: params.project_id,
        url: body.url,
        secret: body.secret ?? null,
        events: body.events,
        enabled: body.enabled,
        policies: {
          retryMaxAttempts: changes.retryMaxAttempts ?? null,
          autoDisable: changes.autoDisable ?? null,
        },
      });
      if (!row) throw webhookLimitReached(params.project_id, perProjectLimit);
      return { status: 201, body: toWebhookJson(row) };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/webhooks",
    tag,
    summary:
      "List a project's webhooks, newest first (endpoint 3): a bare array, or with page/page_size " +
      "the shared envelope {data, total, page, page_size}",
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
    summary: "Get a webhook (endpoint 4)",
    params: webhookParams,
    responses: { 200: { description: "The webhook", schema: webhookSchema } },
    handler: async ({ params, auth }) => ({
      status: 200,
      body: toWebhookJson(await requireWebhook(pool, auth, params.project_id, params.webhook_id)),
    }),
  });

  addRoute(router, registry, {
    method: "put",
    path: "/projects/{project_id}/webhooks/{webhook_id}",
    tag,
    summary: "Update a webhook; omitted fields keep their values (endpoint 5)",
    params: webhookParams,
    body: updateWebhookBody,
    responses: {
      200: { description: "The updated webhook", schema: webhookSchema },
      403: { description: "The url's IP address is a destination deliveries may not reach" },
      409: { description: "The webhook is managed by a Kubernetes Webhook resource" },
    },
    handler: async ({ params, body, auth }) => {
      assertNotOwnedByResource(await requireWebhook(pool, auth, params.project_id, params.webhook_id));
      if (body.url !== undefined) assertDestinationAllowed(body.url, destinationPolicy);
      const row = await updateWebhook(pool, params.project_id, params.webhook_id, {
        ...body,
        ...policyChanges(body),
      });
      if (!row)
        throw new NotFoundError(`Webhook ${params.webhook_id} not found in project ${params.project_id}.`);
      return { status: 200, body: toWebhookJson(row) };
    },
  });

  addRoute(router, registry, {
    method: "delete",
    path: "/projects/{project_id}/webhooks/{webhook_id}",
    tag,
    summary: "Delete a webhook and its delivery records (endpoint 6)",
    params: webhookParams,
    responses: {
      204: { description: "Deleted" },
      409: { description: "The webhook is managed by a Kubernetes Webhook resource" },
    },
    handler: async ({ params, auth }) => {
      assertNotOwnedByResource(await requireWebhook(pool, auth, params.project_id, params.webhook_id));
      await deleteWebhook(pool, params.project_id, params.webhook_id);
      return { status: 204 };
    },
  });
}
