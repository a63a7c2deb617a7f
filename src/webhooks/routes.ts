import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import { eventTypes } from "../event-types.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { projectParams } from "../http/schemas.js";
import { requireProject } from "../projects/access.js";
import { defaultFormatSettings, resolveFormatSettings } from "./format-fields.js";
import { toWebhookJson } from "./presenter.js";
import { registerPreviewRoutes } from "./preview-routes.js";
import { withRateLimit } from "./rate-limit.js";
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
  removeWebhook,
  requireWebhook,
  webhookLimitReached,
  webhookNotFound,
} from "./service.js";
import {
  formatSettingsOf,
  insertWebhookWithinLimit,
  listWebhooks,
  listWebhooksPage,
  updateWebhook,
  type WebhookSecrets,
} from "./store.js";

const tag = "Webhooks";
const pageSizeDefault = 20;

export function registerWebhookRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  options: { destinationPolicy: DestinationPolicy; perProjectLimit: number; secrets: WebhookSecrets },
): void {
  const { destinationPolicy, perProjectLimit, secrets } = options;
  registerPreviewRoutes(router, registry, pool, secrets);
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

  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks",
    tag,
    operationId: "createWebhook",
    summary: "Create a webhook",
    description:
      "`url` and `events` are required; `enabled` defaults to true; without `secret` (or with null) " +
      "deliveries are unsigned. The secret is write-only: responses only say `has_secret`. Duplicate event " +
      "names are removed. A `url` whose host is an IP address the destination policy refuses answers 403; " +
      "a host name is checked when a delivery connects. `format`, `cloudevents_mode`, `template`, " +
      "`template_content_type`, `signature_scheme` and `headers` choose what deliveries look like " +
      "(docs/formats.md); left out, deliveries are today's envelope signed with X-Webhook-Signature. " +
      "`headers` are write-only: responses list only `header_names`.",
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
      const formatSettings = resolveFormatSettings(body, defaultFormatSettings);
      const row = await insertWebhookWithinLimit(pool, secrets, perProjectLimit, {
        projectId: params.project_id,
        url: body.url,
        secret: body.secret ?? null,
        events: body.events,
        enabled: body.enabled,
        policies: {
          retryMaxAttempts: changes.retryMaxAttempts ?? null,
          autoDisable: changes.autoDisable ?? null,
        },
        formatSettings,
        headers: body.headers ?? null,
      });
      if (!row) throw webhookLimitReached(params.project_id, perProjectLimit);
      return { status: 201, body: toWebhookJson(await withRateLimit(pool, row, body.rate_limit)) };
    },
  });

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

  addRoute(router, registry, {
    method: "put",
    path: "/projects/{project_id}/webhooks/{webhook_id}",
    tag,
    operationId: "updateWebhook",
    summary: "Update a webhook",
    description:
      'Omitted fields keep their values; a `secret` replaces the stored one and `"secret": null` removes ' +
      "it; `{}` is accepted. `updated_at` always moves later. Enabling a webhook clears `disabled_reason` " +
      "and `disabled_at`. `headers` replaces every custom header (null or {} removes them); a format other " +
      "than template drops the stored template. A webhook declared by a Kubernetes Webhook resource " +
      "answers 409: change the resource instead.",
    params: webhookParams,
    body: updateWebhookBody,
    responses: {
      200: { description: "The updated webhook", schema: webhookSchema },
      403: { description: "The url's IP address is a destination deliveries may not reach" },
      409: { description: "The webhook is managed by a Kubernetes Webhook resource" },
    },
    handler: async ({ params, body, auth }) => {
      const stored = await requireWebhook(pool, auth, params.project_id, params.webhook_id);
      assertNotOwnedByResource(stored);
      if (body.url !== undefined) assertDestinationAllowed(body.url, destinationPolicy);
      const { headers, rate_limit, ...fields } = body;
      const updated = await updateWebhook(pool, secrets, params.project_id, params.webhook_id, {
        ...fields,
        ...policyChanges(body),
        formatSettings: formatFieldsGiven(body)
          ? resolveFormatSettings(body, formatSettingsOf(stored), { updating: true })
          : undefined,
        headers,
      });
      const row = updated && (await withRateLimit(pool, updated, rate_limit));
      if (!row) throw webhookNotFound(params.project_id, params.webhook_id);
      return { status: 200, body: toWebhookJson(row) };
    },
  });

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

/** Whether an update names any of the format fields (otherwise the stored ones stay as they are). */
const formatFieldsGiven = (body: object): boolean =>
  ["format", "cloudevents_mode", "template", "template_content_type", "signature_scheme"].some(
    (field) => (body as Record<string, unknown>)[field] !== undefined,
  );

/** The API's policy fields as the store's (undefined: not given, keep). */
export function policyChanges(body: {
  retry_policy?: { max_attempts: number } | null | undefined;
  auto_disable?: { after_failures: number; min_duration_seconds: number } | null | undefined;
}) {
  return {
    retryMaxAttempts: body.retry_policy === undefined ? undefined : (body.retry_policy?.max_attempts ?? null),
    autoDisable:
      body.auto_disable === undefined
        ? undefined
        : body.auto_disable === null
          ? null
          : {
              afterFailures: body.auto_disable.after_failures,
              minDurationSeconds: body.auto_disable.min_duration_seconds,
            },
  };
}
