import { afterAll, beforeAll } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import type { WorkerConnections } from "../../src/delivery-engine/queue.js";
import { insertProject } from "../../src/projects/store.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { testSecretBox } from "./secret-keys.js";

// Kept apart from database.ts: importing the service's pool sets node-postgres's type parsers for the
// whole file (int8 as numbers), which tests of raw pg clients must not get by importing database.ts.

/**
 * A database of its own for the tests of this file (or describe block), with a pool of `size`
 * connections (and session `settings`) handed to `use` before they run; both go after them.
 */
export function onNewDatabase(
  use: (pool: Pool) => void,
  size = 2,
  settings: Record<string, string> = {},
): void {
  let database: TestDatabase | undefined;
  let pool: Pool | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = createPool(database.url, size, settings);
    use(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });
}

/**
 * Empties the service's tables, then makes one project with one enabled webhook subscribed to
 * deployment.created (no secret): the start of the tests that write the outbox directly.
 */
export async function resetToOneWebhook(pool: Pool): Promise<{ projectId: number; webhookId: number }> {
  await pool.query(
    "TRUNCATE projects, webhooks, events, deliveries, scheduled_retries RESTART IDENTITY CASCADE",
  );
  const project = await insertProject(pool, { name: "P", slug: "p", repoUrl: null });
  const webhook = await insertWebhook(pool, testSecretBox(), {
    projectId: project.id,
    url: "https://receiver.example/hook",
    events: ["deployment.created"],
    enabled: true,
    secret: null,
  });
  return { projectId: project.id, webhookId: webhook.id };
}

/**
 * The worker's two connections (WorkerConnections: the record's and the claim's) from one test pool:
 * each statement of a turn takes a connection of its own from it, or waits for the one there is.
 */
export const workerConnectionsOf = (pool: Pool): WorkerConnections => ({ outcomes: pool, leases: pool });

/** Each rate-limited webhook's pace row (migration 021): its bucket's tokens as of refilled_at. */
export async function paceRowsOf(pool: Pool): Promise<Map<number, { tokens: number; refilled_at: Date }>> {
  const { rows } = await pool.query<{ webhook_id: number; tokens: number; refilled_at: Date }>(
    "SELECT webhook_id::int, tokens, refilled_at FROM webhook_pace ORDER BY webhook_id",
  );
  return new Map(rows.map(({ webhook_id, ...row }) => [webhook_id, row]));
}
