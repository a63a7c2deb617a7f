import type { Pool } from "../../src/db/pool.js";
import { signPayload } from "../../src/delivery-engine/sender.js";
import { uuidV7 } from "../../src/formats/envelope.js";

/** A webhook as the operator writes one for a `Webhook` resource: its owner column names the resource. */
export async function markManagedByResource(pool: Pool, webhookId: number, owner: string): Promise<void> {
  await pool.query("UPDATE webhooks SET owner = $2 WHERE id = $1", [webhookId, owner]);
}

/**
 * Finished delivery records written straight into Postgres, spread over the past (hoursAgo per row):
 * history that real sends could only produce by waiting days. Each row gets its own event, with an id
 * of the service's own kind (UUIDv7, from its time), and a plausible duration. Returns each row's
 * created_at, in the order given.
 */
export async function insertDeliveryHistory(
  pool: Pool,
  webhookId: number,
  projectId: number,
  rows: { hoursAgo: number; success: boolean; eventType?: string }[],
  /** The webhook's secret: the attempts then record the timestamp and signature a send would have. */
  secret?: string,
): Promise<Date[]> {
  const written: Date[] = [];
  for (const [index, row] of rows.entries()) {
    const eventType = row.eventType ?? "deployment.succeeded";
    const at = new Date(Date.now() - row.hoursAgo * 3_600_000);
    written.push(at);
    const eventId = uuidV7(at);
    const envelope = JSON.stringify({
      id: eventId,
      event_type: eventType,
      timestamp: at.toISOString(),
      project_id: projectId,
      payload: { deployment_id: 1, project_id: projectId, status: eventType.split(".")[1] },
    });
    await pool.query(
      "INSERT INTO events (id, project_id, event_type, envelope, created_at) VALUES ($1, $2, $3, $4, $5)",
      [eventId, projectId, eventType, envelope, at],
    );
    const timestamp = Math.floor(at.getTime() / 1000);
    await pool.query(
      `INSERT INTO deliveries (webhook_id, event_id, event_type, state, success, status_code, response_body,
                               error_message, created_at, delivered_at, request_timestamp, signature, duration_ms)
       VALUES ($1, $2, $3, 'done', $4, $5, $6, $7, $8, $8, $9, $10, $11)`,
      [
        webhookId,
        eventId,
        eventType,
        row.success,
        row.success ? 200 : 503,
        row.success ? "ok" : "upstream unavailable",
        row.success
          ? null
          : "HTTP 503 error from the receiver: Service Unavailable. The endpoint rejected the request.",
        at,
        secret === undefined ? null : timestamp,
        secret === undefined ? null : signPayload(secret, String(timestamp), envelope),
        secret === undefined ? null : 40 + ((index * 137) % 460),
      ],
    );
  }
  return written;
}
