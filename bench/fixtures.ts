import pg from "pg";
import type { EventToEmit } from "../src/delivery-engine/emit.js";
import { exampleDeploymentPayload } from "../src/deployments/example-payload.js";
import type { ProjectRow } from "../src/projects/store.js";

export const benchEventType = "deployment.succeeded" as const;
export const benchSecret = "whsec-bench-signing-secret";

/** The service settings every benchmark starts with (on loopback, quiet, receivers on loopback allowed). */
export const benchServiceEnv = {
  API_KEY: "bench-admin-key-0123456789",
  HOST: "127.0.0.1",
  PORT: "0",
  LOG_LEVEL: "silent",
  DELIVERY_ALLOW_PRIVATE_NETWORKS: "true",
};

/** One project with `fanOut` enabled, signed webhooks subscribed to the bench event, all at the receiver. */
export async function createProjectWithWebhooks(
  databaseUrl: string,
  receiverUrl: string,
  fanOut: number,
): Promise<ProjectRow> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<ProjectRow>(
      // A new slug each time: the scale benchmark starts the engine several times on one database.
      `INSERT INTO projects (name, slug) VALUES ('Bench', 'bench-' || gen_random_uuid())
       RETURNING id::int, name, slug, repo_url, created_at, updated_at`,
    );
    const project = rows[0] as ProjectRow;
    await client.query(
      `INSERT INTO webhooks (project_id, url, secret, events, enabled)
       SELECT $1, $2 || '/hooks/' || n, $3, ARRAY[$4], true FROM generate_series(1, $5::int) AS n`,
      [project.id, receiverUrl, benchSecret, benchEventType, fanOut],
    );
    return project;
  } finally {
    await client.end();
  }
}

/** `count` events of the bench type for `project`, with a realistic deployment payload. */
export function benchEvents(project: ProjectRow, count: number): EventToEmit[] {
  const payload = exampleDeploymentPayload(benchEventType, project);
  return Array.from({ length: count }, () => ({ eventType: benchEventType, projectId: project.id, payload }));
}

let nextRolloutId = 1;

/**
 * The events as rollouts of `perRollout` events each, as a rollout's controller writes them: a
 * rollout's events consecutive, at its positions 0, 1, …, so that each of their deliveries waits for
 * the one before it (docs/deliveries.md, "Order"). Every call takes rollout ids not used before.
 */
export function asRollouts(events: EventToEmit[], perRollout: number): EventToEmit[] {
  let id = 0;
  return events.map((event, i) => {
    if (i % perRollout === 0) id = nextRolloutId++;
    return { ...event, rollout: { id, position: i % perRollout } };
  });
}

export function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until every delivery row is state='done' (the outcome recorded) and `expected` of the project's
 * succeeded; returns Date.now() at that moment. Polls a cheap query on the unfinished-rows index. Only
 * the project's rows are counted: the scale benchmark's history is in other projects.
 */
export async function waitUntilAllDone(
  db: pg.Pool,
  projectId: number,
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ finished: boolean }>(
      "SELECT NOT EXISTS (SELECT 1 FROM deliveries WHERE delivered_at IS NULL) AS finished",
    );
    if (rows[0]?.finished) {
      const doneAt = Date.now();
      const { rows: counts } = await db.query<{ done: number; succeeded: number }>(
        `SELECT count(*)::int AS done, (count(*) FILTER (WHERE success AND status_code = 200))::int AS succeeded
           FROM deliveries WHERE webhook_id IN (SELECT id FROM webhooks WHERE project_id = $1)`,
        [projectId],
      );
      const { done = 0, succeeded = 0 } = counts[0] ?? {};
      if (done === expected && succeeded === expected) return doneAt;
      if (done > expected) throw new Error(`${done} deliveries recorded, expected ${expected}`);
      if (done === expected) throw new Error(`only ${succeeded} of ${expected} deliveries succeeded`);
    }
    if (Date.now() > deadline) throw new Error(`deliveries not all done within ${timeoutMs} ms`);
    await sleep(10);
  }
}
