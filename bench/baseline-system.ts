// The baseline a Node developer would otherwise build: the same events/deliveries rows, plus one pg-boss
// job per delivery inserted in the same transaction; pg-boss workers fetch jobs in batches, POST each with
// axios (keep-alive, same headers and signature as the engine) and write the outcome to the delivery row
// with one UPDATE per batch; pg-boss then completes the batch's jobs.
import { Agent } from "node:http";
import axios from "axios";
import { PgBoss } from "pg-boss";
import { createPool, withTransaction } from "../src/db/pool.js";
import type { DeliveryOutcome } from "../src/delivery-engine/sender.js";
import { createEnvelope } from "../src/formats/envelope.js";
import { type DeliveryJob, postWithAxios } from "./baseline-sender.js";
import { wallClockMs } from "./clock.js";
import type { BenchDatabase } from "./database.js";
import type { DeliverySystem } from "./driver.js";
import { createProjectWithWebhooks } from "./fixtures.js";

export interface BaselineSettings {
  /** Jobs per pg-boss fetch (and per handler call). */
  batchSize: number;
  /** pg-boss workers on the queue; batchSize × workers = concurrent POSTs. */
  workers: number;
  poolSize: number;
}

const queue = "webhook-deliveries";

export async function startBaselineSystem(
  database: BenchDatabase,
  receiverUrl: string,
  fanOut: number,
  settings: BaselineSettings,
): Promise<DeliverySystem> {
  const project = await createProjectWithWebhooks(database.url, receiverUrl, fanOut);
  const boss = new PgBoss({
    connectionString: database.url,
    max: settings.poolSize,
    useListenNotify: true,
    schedule: false,
  });
  boss.on("error", (error) => console.error("pg-boss error:", error));
  await boss.start();
  await boss.createQueue(queue, { notify: true, retryLimit: 0 });

  const httpAgent = new Agent({ keepAlive: true, maxSockets: settings.batchSize * settings.workers });
  const http = axios.create({
    httpAgent,
    timeout: 30_000,
    maxRedirects: 0,
    responseType: "text",
    transformRequest: [(data) => data],
    transformResponse: [(data) => data],
    validateStatus: () => true,
  });
  const db = boss.getDb();
  await boss.work<DeliveryJob>(
    queue,
    {
      batchSize: settings.batchSize,
      localConcurrency: settings.workers,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: 0.5,
    },
    async (jobs) => {
      const outcomes = await Promise.all(jobs.map((job) => postWithAxios(http, job.data)));
      await recordOutcomes(
        db,
        jobs.map((job) => job.data.deliveryId),
        outcomes,
      );
    },
  );

  const emitter = createPool(database.url, 4);
  const observer = createPool(database.url, 1);
  return {
    project,
    fanOut,
    observer,
    async emit(events) {
      const now = new Date();
      const emittedAt = wallClockMs();
      const emitted = events.map((event) => {
        const envelope = createEnvelope(event.eventType, event.projectId, event.payload, now);
        return { id: envelope.id, eventType: event.eventType, body: JSON.stringify(envelope) };
      });
      const byId = new Map(emitted.map((e) => [e.id, e]));
      await withTransaction(emitter, async (client) => {
        const { rows } = await client.query<{
          id: number;
          event_id: string;
          url: string;
          secret: string | null;
        }>(
          `WITH new_events AS (
             INSERT INTO events (id, project_id, event_type, envelope, created_at)
             SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[])
             RETURNING id, project_id, event_type
           ), queued AS (
             INSERT INTO deliveries (webhook_id, event_id, event_type)
             SELECT w.id, e.id, e.event_type FROM new_events e
               JOIN webhooks w ON w.project_id = e.project_id AND w.enabled AND e.event_type = ANY (w.events)
             RETURNING id, webhook_id, event_id
           )
           SELECT q.id, q.event_id, w.url, w.secret FROM queued q JOIN webhooks w ON w.id = q.webhook_id`,
          [
            emitted.map((e) => e.id),
            events.map((e) => e.projectId),
            events.map((e) => e.eventType),
            emitted.map((e) => e.body),
            events.map(() => now),
          ],
        );
        const jobs = rows.map((row) => {
          const event = byId.get(row.event_id) as (typeof emitted)[number];
          const data: DeliveryJob = {
            deliveryId: row.id,
            url: row.url,
            secret: row.secret,
            eventType: event.eventType,
            body: event.body,
          };
          return { data };
        });
        await boss.insert(queue, jobs, { db: { executeSql: (text, values) => client.query(text, values) } });
      });
      const committedAt = wallClockMs();
      return emitted.map((e) => ({ id: e.id, emittedAt, committedAt }));
    },
    async close() {
      await boss.stop({ graceful: true, timeout: 10_000 });
      httpAgent.destroy();
      await emitter.end();
      await observer.end();
    },
  };
}

/** One UPDATE for the whole batch, setting the same outcome columns the engine sets. */
async function recordOutcomes(
  db: ReturnType<PgBoss["getDb"]>,
  ids: number[],
  outcomes: Array<DeliveryOutcome & { deliveredAt: Date }>,
): Promise<void> {
  await db.executeSql(
    `UPDATE deliveries d
        SET state = 'done', success = o.success, status_code = o.status_code, response_body = o.response_body,
            error_message = o.error_message, delivered_at = o.delivered_at
       FROM unnest($1::bigint[], $2::boolean[], $3::int[], $4::text[], $5::text[], $6::timestamptz[])
            AS o (id, success, status_code, response_body, error_message, delivered_at)
      WHERE d.id = o.id`,
    [
      ids,
      outcomes.map((o) => o.success),
      outcomes.map((o) => o.statusCode),
      outcomes.map((o) => o.responseBody),
      outcomes.map((o) => o.errorMessage),
      outcomes.map((o) => o.deliveredAt),
    ],
  );
}
