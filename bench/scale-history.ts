import pg from "pg";
import { exampleDeploymentPayload } from "../src/deployments/example-payload.js";
import { benchEventType } from "./fixtures.js";

/** How the scale benchmark's history is shaped. */
export interface HistoryShape {
  /** Delivery records to write. */
  deliveries: number;
  /** Projects of the history, each with `webhooksPerProject` webhooks subscribed to every event. */
  projects: number;
  webhooksPerProject: number;
  /** The history spans this many days back from now, oldest ids first. */
  days: number;
  /** Share of failed attempts (HTTP 503), spread evenly. */
  failedShare: number;
}

export interface WrittenHistory {
  deliveries: number;
  events: number;
  seconds: number;
  /** The first history webhook, whose lists and stats are measured. */
  webhook: { id: number; projectId: number };
  bytes: { deliveries: number; events: number };
}

const chunkEvents = 50_000;

/**
 * Writes months of history as the service would have: events with their envelope and one finished
 * attempt per webhook of their project, ids growing with created_at, then VACUUM ANALYZE (what
 * autovacuum would have done by then). Written in chunks, each its own transaction.
 */
export async function writeHistory(
  databaseUrl: string,
  shape: HistoryShape,
  progress: (written: number) => void,
): Promise<WrittenHistory> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const startedAt = performance.now();
    await client.query(
      `INSERT INTO projects (name, slug) SELECT 'History ' || p, 'history-' || p FROM generate_series(1, $1::int) p`,
      [shape.projects],
    );
    await client.query(
      `INSERT INTO webhooks (project_id, url, secret, events, enabled, secret_encrypted)
       SELECT p.id, 'https://history.example/' || p.id || '/' || n, NULL, ARRAY[$1], true, true
         FROM projects p, generate_series(1, $2::int) n WHERE p.slug LIKE 'history-%' ORDER BY p.id, n`,
      [benchEventType, shape.webhooksPerProject],
    );
    const { rows: projects } = await client.query<{ id: string }>(
      "SELECT id FROM projects WHERE slug LIKE 'history-%' ORDER BY id",
    );
    const projectIds = projects.map((p) => Number(p.id));
    const events = Math.ceil(shape.deliveries / shape.webhooksPerProject);
    const payload = JSON.stringify(exampleDeploymentPayload(benchEventType, { id: 0, name: "History" }));
    const spanMs = shape.days * 24 * 60 * 60 * 1000;
    const start = Date.now() - spanMs;
    const failEvery = Math.round(1 / shape.failedShare);
    for (let first = 0; first < events; first += chunkEvents) {
      const last = Math.min(events, first + chunkEvents) - 1;
      // Event i is at start + i × step, in project i mod projects: every project's history spans the
      // days. Its attempts (one per webhook of the project) are written by the same statement. Its id is a
      // UUIDv7 of its time, as the engine makes them (gen_random_uuid with the time over its first 48 bits).
      await client.query(
        `WITH new_events AS (
           INSERT INTO events (id, project_id, event_type, envelope, created_at)
           SELECT id, project_id, $4,
                  format('{"id":"%s","event_type":"%s","timestamp":"%s","project_id":%s,"payload":%s}', id, $4::text,
                         to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), project_id, $5::text),
                  at
             FROM (SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                                 PLACING substring(int8send(floor($1::float8 + i * $3::float8)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid AS id,
                          ($6::bigint[])[1 + i % array_length($6::bigint[], 1)] AS project_id,
                          to_timestamp(($1::float8 + i * $3::float8) / 1000) AS at
                     FROM generate_series($2::int, $7::int) i) g
            ORDER BY at
           RETURNING id, project_id, event_type, created_at
         )
         INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, state, success, status_code,
                                 response_body, error_message, created_at, delivered_at)
         SELECT w.id, e.id, e.event_type, 1, 'done', o.ok, CASE WHEN o.ok THEN 200 ELSE 503 END,
                CASE WHEN o.ok THEN 'ok' ELSE 'upstream unavailable' END,
                CASE WHEN o.ok THEN NULL
                     ELSE 'HTTP 503 error from ' || w.url || ': Service Unavailable. The endpoint rejected the request.' END,
                e.created_at + interval '2 milliseconds', e.created_at + interval '9 milliseconds'
           FROM (SELECT *, row_number() OVER (ORDER BY created_at) AS n FROM new_events) e
           JOIN webhooks w ON w.project_id = e.project_id
          CROSS JOIN LATERAL (SELECT (e.n + w.id) % $8 <> 0 AS ok) o
          ORDER BY e.created_at, w.id`,
        [start, first, spanMs / events, benchEventType, payload, projectIds, last, failEvery],
      );
      progress(Math.min(shape.deliveries, (last + 1) * shape.webhooksPerProject));
    }
    await client.query("VACUUM (ANALYZE) events");
    await client.query("VACUUM (ANALYZE) deliveries");
    const seconds = (performance.now() - startedAt) / 1000;
    const { rows: counts } = await client.query<{ deliveries: string; events: string }>(
      `SELECT (SELECT count(*) FROM deliveries) AS deliveries, (SELECT count(*) FROM events) AS events`,
    );
    const { rows: sizes } = await client.query<{ deliveries: string; events: string }>(
      `SELECT pg_total_relation_size('deliveries') AS deliveries, pg_total_relation_size('events') AS events`,
    );
    const { rows: webhooks } = await client.query<{ id: string; project_id: string }>(
      "SELECT id, project_id FROM webhooks WHERE project_id = $1 ORDER BY id LIMIT 1",
      [projectIds[0]],
    );
    return {
      deliveries: Number(counts[0]?.deliveries),
      events: Number(counts[0]?.events),
      seconds,
      webhook: { id: Number(webhooks[0]?.id), projectId: Number(webhooks[0]?.project_id) },
      bytes: { deliveries: Number(sizes[0]?.deliveries), events: Number(sizes[0]?.events) },
    };
  } finally {
    await client.end();
  }
}
