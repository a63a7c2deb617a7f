import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { isSendRefusal, type SendRefusal, type SendSlot } from "../delivery-engine/synchronous-sends.js";
import { TooManyRequestsError } from "../errors.js";
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
  if (!isSendRefusal(reserved)) return reserved;
  metrics.synchronousSendsRefused.inc({ limit: reserved.refused });
  const retryAfterSeconds = Math.max(1, Math.ceil(reserved.retryAfterMs / 1000));
  const message = explain[reserved.refused](reserved.limit, { project: projectId, webhook: webhookId });
  throw new TooManyRequestsError(`${message} Retry after ${retryAfterSeconds} s.`, retryAfterSeconds);
}
