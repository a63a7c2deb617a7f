import { type Pool, withTransaction } from "../db/pool.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { insertEventRecord, insertLeasedDelivery } from "../delivery-engine/queue.js";
import { exampleDeploymentPayload } from "../deployments/example-payload.js";
import type { DeploymentEventType } from "../event-types.js";
import { createEnvelope } from "../formats/envelope.js";
import { metrics } from "../metrics.js";
import type { ProjectRow } from "../projects/store.js";
import { webhookNotFound } from "../webhooks/service.js";
import type { WebhookRow } from "../webhooks/store.js";
import { type RetryResult, retryResult } from "./replay.js";
import { admitSynchronousSend } from "./send-admission.js";

export interface TestEventResult extends RetryResult {
  event_id: string;
}

/**
 * Sends an example envelope of `eventType` to the webhook now (POST …/test), recorded as a delivery like
 * any other: the event and its leased delivery row in one transaction, then the send, recorded before
 * the outcome is returned. Works on disabled webhooks and whatever the subscription: it is asked for.
 * Within the project's share of synchronous sends (send-admission.ts): over it, a 429 records nothing.
 */
export async function sendTestEvent(
  pool: Pool,
  engine: DeliveryEngine,
  project: ProjectRow,
  webhook: WebhookRow,
  eventType: DeploymentEventType,
): Promise<TestEventResult> {
  const envelope = createEnvelope(eventType, project.id, exampleDeploymentPayload(eventType, project));
  const body = JSON.stringify(envelope);
  const slot = admitSynchronousSend(engine, project.id, webhook.id);
  const row = await withTransaction(pool, async (client) => {
    await insertEventRecord(client, {
      id: envelope.id,
      projectId: project.id,
      eventType,
      body,
      createdAt: new Date(envelope.timestamp),
    });
    const inserted = await insertLeasedDelivery(
      client,
      { webhookId: webhook.id, eventId: envelope.id, eventType, attemptNumber: 1 },
      engine.lease,
    );
    // The webhook was deleted meanwhile. Thrown inside the transaction: the event is not recorded either.
    if (!inserted) throw webhookNotFound(webhook.project_id, webhook.id);
    return inserted;
  }).catch((error: unknown) => {
    slot.release();
    throw error;
  });
  const outcome = await engine.sendLeased(
    webhook,
    { id: row.id, eventType, eventId: envelope.id, body },
    slot,
  );
  metrics.testEvents.inc({ outcome: outcome.success ? "success" : "failure" });
  // delivery_id and event_id first, where the test event's answer (and the CLI's output) had them.
  const { delivery_id, ...result } = retryResult(outcome, row);
  return { delivery_id, event_id: envelope.id, ...result };
}
