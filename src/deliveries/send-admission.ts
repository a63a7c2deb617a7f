import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { isSendRefusal, type SendRefusal, type SendSlot } from "../delivery-engine/synchronous-sends.js";
import { TooManyRequestsError } from "../errors.js";
import type { AuthContext } from "../http/auth-context.js";
import { metrics } from "../metrics.js";

/** What each refusal says: which bound, and the setting that sets it (docs/deliveries.md). */
const explain: Record<
  SendRefusal["refused"],
  (limit: number, ids: { project: number; webhook: number }) => string
> = {
  project: (limit, { project }) =>
    `Project ${project} already has ${limit} test events and replays waiting for their receivers on this replica, its share (SYNC_SENDS_PER_PROJECT_CONCURRENCY); try again when one has finished.`,
  webhook: (limit, { webhook }) =>
    `Webhook ${webhook} already has ${limit} deliveries in flight on this replica, its limit (DELIVERY_PER_WEBHOOK_CONCURRENCY); try again when one has finished.`,
  replica: (limit) =>
    `This replica already has ${limit} test events and replays in flight, its limit (half of DELIVERY_CONCURRENCY); try again shortly.`,
  "per-minute": (limit, { project }) =>
    `Project ${project} has sent its ${limit} test events and replays per minute on this replica (SYNC_SENDS_PER_PROJECT_PER_MINUTE).`,
  "per-day": (limit, { project }) =>
    `Project ${project} has sent its ${limit} test events and replays per day on this replica (SYNC_SENDS_PER_PROJECT_PER_DAY).`,
};

/**
 * A slot for a replay or test event of the project's webhook, or a 429 with Retry-After when the send
 * would go over its project's share, its webhook's limit, the replica's, or the project's pace. Asked
 * before anything is recorded, so a refusal records nothing.
 */
export function admitSynchronousSend(engine: DeliveryEngine, projectId: number, webhookId: number): SendSlot {
  const reserved = engine.reserveSend(projectId, webhookId);
  if (isSendRefusal(reserved)) throw refusedWith(reserved, { project: projectId, webhook: webhookId });
  return reserved;
}

/**
 * Answers 429 at once, before any query, when the project is over its share or pace, for a caller
 * known without a query to see the project (an admin key or one of the project's keys): a storm of
 * refused requests then costs the others little more than its authentication. Any other caller goes
 * the usual way (a 404 for a project it may not see, never a word about that project's sends).
 */
export function refuseEarly(
  engine: DeliveryEngine,
  auth: AuthContext,
  projectId: number,
  webhookId: number,
): void {
  if (auth.method !== "api_key" || (auth.projectIds !== null && !auth.projectIds.includes(projectId))) return;
  const refusal = engine.projectRefusal(projectId);
  if (refusal) throw refusedWith(refusal, { project: projectId, webhook: webhookId });
}

function refusedWith(refusal: SendRefusal, ids: { project: number; webhook: number }): TooManyRequestsError {
  metrics.synchronousSendsRefused.inc({ limit: refusal.refused });
  const retryAfterSeconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const message = explain[refusal.refused](refusal.limit, ids);
  return new TooManyRequestsError(`${message} Retry after ${retryAfterSeconds} s.`, retryAfterSeconds);
}
