import type { Queryable } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import { ApiError, ConflictError, NotFoundError } from "../errors.js";
import type { AuthContext } from "../http/auth-context.js";
import { iso } from "../http/schemas.js";
import { authorizeProject } from "../projects/access.js";
import type { ProjectRow } from "../projects/store.js";
import { findProject } from "../projects/store.js";
import { literalDestinationRefusal } from "./destination-check.js";
import type { WebhookRow } from "./store.js";
import { findWebhook } from "./store.js";

/**
 * The project, if the caller may make this request in it; otherwise 404 (another project's ids look
 * nonexistent) or 403 (projects/access.ts).
 */
export async function requireProject(
  db: Queryable,
  auth: AuthContext,
  projectId: number,
): Promise<ProjectRow> {
  const project = await findProject(db, projectId);
  if (!project) throw new NotFoundError(`Project ${projectId} not found.`);
  await authorizeProject(db, auth, project);
  return project;
}

/** A webhook id that is not (or no longer) in the project. */
export const webhookNotFound = (projectId: number, webhookId: number): NotFoundError =>
  new NotFoundError(`Webhook ${webhookId} not found in project ${projectId}.`);

export async function requireProjectWebhook(
  db: Queryable,
  auth: AuthContext,
  projectId: number,
  webhookId: number,
): Promise<{ project: ProjectRow; webhook: WebhookRow }> {
  const project = await requireProject(db, auth, projectId);
  const webhook = await findWebhook(db, projectId, webhookId);
  if (!webhook) throw webhookNotFound(projectId, webhookId);
  return { project, webhook };
}

export async function requireWebhook(
  db: Queryable,
  auth: AuthContext,
  projectId: number,
  webhookId: number,
): Promise<WebhookRow> {
  return (await requireProjectWebhook(db, auth, projectId, webhookId)).webhook;
}

/**
 * Webhooks declared as Kubernetes resources are owned by them: an API write would be reverted by the
 * next reconcile, so it is refused with a message that says where to make the change instead.
 */
export function assertNotOwnedByResource(webhook: WebhookRow): void {
  if (webhook.owner !== null) {
    throw new ConflictError(
      `Webhook ${webhook.id} is managed by the Kubernetes resource Webhook ${webhook.owner}; ` +
        "change or delete that resource instead (kubectl edit/delete webhook).",
    );
  }
}

/**
 * A URL whose host is an IP literal the delivery policy refuses is a 403 at once: well-formed, but a
 * destination this install does not deliver to. Host names are judged when a delivery connects (their
 * addresses can change), so the check there stays the rule.
 */
export function assertDestinationAllowed(url: string, policy: DestinationPolicy): void {
  const reason = literalDestinationRefusal(url, policy);
  if (reason !== null) {
    throw new ApiError(403, "destination_refused", `url is refused as a delivery destination: ${reason}.`);
  }
}

/** A create beyond WEBHOOKS_PER_PROJECT_LIMIT: 409, nothing created. */
export function webhookLimitReached(projectId: number, limit: number): ApiError {
  return new ApiError(
    409,
    "limit_reached",
    `Project ${projectId} already has ${limit} webhooks, the most a project may have (WEBHOOKS_PER_PROJECT_LIMIT, set by the service's admin). Delete one before creating another.`,
  );
}

export function toWebhookJson(row: WebhookRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    has_secret: row.secret !== null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    managed_by: managedBy(row.owner),
    retry_policy: row.retry_max_attempts === null ? null : { max_attempts: row.retry_max_attempts },
    auto_disable:
      row.auto_disable_after_failures === null
        ? null
        : {
            after_failures: row.auto_disable_after_failures,
            min_duration_seconds: row.auto_disable_min_seconds ?? 0,
          },
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at === null ? null : iso(row.disabled_at),
  };
}

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

/** The owner column holds "namespace/name" of the Webhook resource (namespaces hold no slash). */
function managedBy(owner: string | null) {
  if (owner === null) return null;
  const slash = owner.indexOf("/");
  return { kind: "Webhook" as const, namespace: owner.slice(0, slash), name: owner.slice(slash + 1) };
}
