import type { Queryable } from "../db/pool.js";
import type { DestinationPolicy } from "../delivery-engine/destination-policy.js";
import { ApiError, ConflictError, NotFoundError } from "../errors.js";
import type { AuthContext } from "../http/auth-context.js";
import { forgetWebhookSeries } from "../metrics.js";
import { requireProject } from "../projects/access.js";
import type { ProjectRow } from "../projects/store.js";
import { literalDestinationRefusal } from "./destination-check.js";
import { deleteOwnedWebhook, deleteWebhooksOfMissingOwners } from "./owned-store.js";
import type { WebhookRow } from "./store.js";
import { deleteWebhook, findWebhook } from "./store.js";

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

// A deleted webhook's metric series go with it (metrics.ts, forgetWebhookSeries), so that the webhook_id
// label stays bounded by the webhooks that exist: every delete goes through one of these.

export async function removeWebhook(db: Queryable, projectId: number, webhookId: number): Promise<boolean> {
  const removed = await deleteWebhook(db, projectId, webhookId);
  if (removed) await forgetWebhookSeries(webhookId);
  return removed;
}

/** The webhook of a Webhook resource ("namespace/name"), gone with the resource. */
export async function removeOwnedWebhook(db: Queryable, owner: string): Promise<boolean> {
  const id = await deleteOwnedWebhook(db, owner);
  if (id !== undefined) await forgetWebhookSeries(id);
  return id !== undefined;
}

/** The webhooks of Webhook resources not among `owners`, a complete list; returns how many went. */
export async function removeWebhooksOfMissingOwners(db: Queryable, owners: string[]): Promise<number> {
  const ids = await deleteWebhooksOfMissingOwners(db, owners);
  for (const id of ids) await forgetWebhookSeries(id);
  return ids.length;
}
