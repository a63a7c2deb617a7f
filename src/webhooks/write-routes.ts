import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import { addRoute } from "../http/route.js";
import { projectParams } from "../http/schemas.js";
import { requireProject } from "../projects/access.js";
import { defaultFormatSettings, resolveFormatSettings } from "./format-fields.js";
import { toWebhookJson } from "./presenter.js";
import { withRateLimit } from "./rate-limit.js";
import { withRolloutDetails } from "./rollout-details-field.js";
import { assertStandardWebhooksSigned, assertTemplateRenders } from "./save-checks.js";
import { createWebhookBody, updateWebhookBody, webhookParams, webhookSchema } from "./schemas.js";
import {
  assertDestinationAllowed,
  assertNotOwnedByResource,
  requireProjectWebhook,
  webhookLimitReached,
  webhookNotFound,
} from "./service.js";
import { formatSettingsOf, insertWebhookWithinLimit, updateWebhook, type WebhookSecrets } from "./store.js";
import { urlOfUpdate, withUrlSecret } from "./url-secret.js";

// The operations that write a webhook (create and update), apart from the reads and the delete in
// routes.ts: each turns the API's fields into the store's.

const tag = "Webhooks";

export interface WebhookWriteOptions {
  destinationPolicy: DestinationPolicy;
  perProjectLimit: number;
  secrets: WebhookSecrets;
}

export function addCreateWebhookRoute(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  options: WebhookWriteOptions,
): void {
  const { destinationPolicy, perProjectLimit, secrets } = options;
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
      "`headers` are write-only: responses list only `header_names`. `filters` narrow the subscribed events " +
      "to those of matching workloads (labels, environment, kind; docs/api.md, Filters); without them every " +
      "subscribed event is delivered. `url_secret: true` keeps the url a secret: answers show it as " +
      "scheme://host/******** (docs/formats.md). `rollout_details: true` adds `payload.rollout` to rollout " +
      "events recorded from the cluster (docs/formats.md, Rollout details).",
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
      const project = await requireProject(pool, auth, params.project_id);
      assertDestinationAllowed(body.url, destinationPolicy);
      const changes = policyChanges(body);
      const formatSettings = await resolveFormatSettings(body, defaultFormatSettings);
      assertStandardWebhooksSigned(body, formatSettings.signatureScheme, undefined);
      await assertTemplateRenders(project, formatSettings, body.events);
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
        filters: body.filters ?? null,
      });
      if (!row) throw webhookLimitReached(params.project_id, perProjectLimit);
      const paced = await withRateLimit(pool, row, body.rate_limit);
      const masked = await withUrlSecret(pool, paced, body.url_secret);
      return {
        status: 201,
        body: toWebhookJson(await withRolloutDetails(pool, masked, body.rollout_details)),
      };
    },
  });
}

export function addUpdateWebhookRoute(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  options: WebhookWriteOptions,
): void {
  const { destinationPolicy, secrets } = options;
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
      "than template drops the stored template. `filters` replaces the filters as a whole and null removes " +
      "them. A webhook declared by a Kubernetes Webhook resource " +
      "answers 409: change the resource instead.",
    params: webhookParams,
    body: updateWebhookBody,
    responses: {
      200: { description: "The updated webhook", schema: webhookSchema },
      403: { description: "The url's IP address is a destination deliveries may not reach" },
      409: { description: "The webhook is managed by a Kubernetes Webhook resource" },
    },
    handler: async ({ params, body, auth }) => {
      const { project, webhook: stored } = await requireProjectWebhook(
        pool,
        auth,
        params.project_id,
        params.webhook_id,
      );
      assertNotOwnedByResource(stored);
      const url = urlOfUpdate(body, stored);
      if (url !== undefined) assertDestinationAllowed(url, destinationPolicy);
      const formatSettings = formatFieldsGiven(body)
        ? await resolveFormatSettings(body, formatSettingsOf(stored), { updating: true })
        : undefined;
      const settings = formatSettings ?? formatSettingsOf(stored);
      assertStandardWebhooksSigned(body, settings.signatureScheme, { hasSecret: stored.secret !== null });
      if (formatSettings !== undefined || body.events !== undefined) {
        await assertTemplateRenders(project, settings, body.events ?? stored.events);
      }
      const { headers, rate_limit, url_secret, rollout_details, ...fields } = body;
      const updated = await updateWebhook(pool, secrets, params.project_id, params.webhook_id, {
        ...fields,
        url,
        ...policyChanges(body),
        formatSettings,
        headers,
      });
      const paced = updated && (await withRateLimit(pool, updated, rate_limit));
      const masked = paced && (await withUrlSecret(pool, paced, url_secret));
      const row = masked && (await withRolloutDetails(pool, masked, rollout_details));
      if (!row) throw webhookNotFound(params.project_id, params.webhook_id);
      return { status: 200, body: toWebhookJson(row) };
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
