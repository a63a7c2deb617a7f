import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Request, Response, Router } from "express";
import type { Pool } from "../db/pool.js";
import { MethodNotAllowedError } from "../errors.js";
import { addRoute } from "../http/route.js";
import { projectParams } from "../http/schemas.js";
import { requireProject } from "../projects/access.js";
import { defaultFormatSettings, resolveFormatSettings } from "./format-fields.js";
import { type PreviewResult, previewDelivery } from "./preview.js";
import type { PreviewAdmission } from "./preview-admission.js";
import { draftPreviewBody, previewBody, previewSchema } from "./preview-schemas.js";
import { webhookParams } from "./schemas.js";
import { requireProjectWebhook } from "./service.js";
import { formatSettingsOf, type WebhookSecrets } from "./store.js";

const tag = "Webhooks";
const description =
  "Renders an example event of `event_type` (default deployment.succeeded) with the webhook's format, " +
  "signature scheme and custom headers, through the same code a delivery is sent with, and answers the " +
  "body and headers. Sends nothing and records nothing. A format that cannot render the event answers 200 " +
  "with `error` and a null body. A project has a few previews at once and a pace per minute " +
  "(PREVIEWS_PER_PROJECT_CONCURRENCY, PREVIEWS_PER_PROJECT_PER_MINUTE); over either, 429 with Retry-After.";

/** The preview operations (docs/api.md, Preview): of a stored webhook, and of a draft. */
export function registerPreviewRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  secrets: WebhookSecrets,
  admission: PreviewAdmission,
): void {
  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/{webhook_id}/preview",
    tag,
    operationId: "previewWebhook",
    summary: "Preview a webhook's delivery of an event",
    description,
    params: webhookParams,
    body: previewBody,
    responses: {
      200: { description: "The rendered request", schema: previewSchema },
      429: { description: "The project's previews are over their share or pace; see Retry-After" },
    },
    handler: async ({ params, body, auth }): Promise<{ status: 200; body: PreviewResult }> => {
      const { project, webhook } = await requireProjectWebhook(
        pool,
        auth,
        params.project_id,
        params.webhook_id,
      );
      return admission.within(project.id, async () => {
        let secret: string | null = null;
        try {
          secret = webhook.secret === null ? null : secrets.open(webhook.secret);
        } catch {
          const error = "the webhook secret cannot be decrypted with this service's keys";
          return {
            status: 200,
            body: { event_type: body.event_type, content_type: null, headers: {}, body: null, error },
          };
        }
        const subject = {
          settings: formatSettingsOf(webhook),
          secret,
          customHeaderNames: webhook.header_names,
        };
        return { status: 200, body: await previewDelivery(project, subject, body.event_type) };
      });
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/projects/{project_id}/webhooks/preview",
    tag,
    operationId: "previewWebhookDraft",
    summary: "Preview a draft webhook's delivery of an event",
    description: `${description} The request holds the fields of a webhook create (none required), as a form has them before saving; they are checked as a create checks them.`,
    params: projectParams,
    body: draftPreviewBody,
    responses: {
      200: { description: "The rendered request", schema: previewSchema },
      429: { description: "The project's previews are over their share or pace; see Retry-After" },
    },
    handler: async ({ params, body, auth }) => {
      const project = await requireProject(pool, auth, params.project_id);
      // Within the share: the draft's template is parsed (checked) on the template threads too.
      return admission.within(project.id, async () => {
        const subject = {
          settings: await resolveFormatSettings(body, defaultFormatSettings),
          secret: body.secret ?? null,
          customHeaderNames: Object.keys(body.headers ?? {}).sort(),
        };
        return { status: 200 as const, body: await previewDelivery(project, subject, body.event_type) };
      });
    },
  });

  // Any other method on the draft's path would reach the routes of /webhooks/{webhook_id} ("preview" is
  // no id: a 400): answered here as every path answers a method it does not serve.
  router.all("/projects/:project_id/webhooks/preview", (req: Request, res: Response) => {
    if (req.method === "OPTIONS") {
      res.set("Allow", "POST").status(204).end();
      return;
    }
    throw new MethodNotAllowedError(`${req.method} is not allowed on /api${req.path}; use POST.`, "POST");
  });
}
