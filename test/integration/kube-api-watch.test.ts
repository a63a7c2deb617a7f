import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { listAttempts } from "../../src/kube-api/delivery-store.js";
import { DeliveryWatchCursor } from "../../src/kube-api/delivery-watch.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// The aggregated API's watch and list against real Postgres: what `kubectl get deliveries --watch`
// and `--chunk-size` rest on. The cluster suite drives the same through kubectl
// (test/cluster/kubectl-deliveries.test.ts); here the orders of commits a cluster cannot force.

let database: TestDatabase;
let pool: Pool;
let webhookId: number;
const shop = { namespace: "shop", requirements: [] };

/** A queued delivery of a new event, in its own transaction unless a client is given. */
async function queue(db: Pick<Pool, "query"> = pool): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `WITH e AS (INSERT INTO events (id, project_id, event_type, envelope)
                SELECT gen_random_uuid(), project_id, 'deployment.created', '{}' FROM webhooks WHERE id = $1
                RETURNING id, event_type)
     INSERT INTO deliveries (webhook_id, event_id, event_type) SELECT $1, id, event_type FROM e RETURNING id::int`,
    [webhookId],
  );
  return rows[0]?.id ?? 0;
}

async function record(id: number, success = true): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET state = 'done', success = $2, status_code = CASE WHEN $2 THEN 200 ELSE 503 END,
            delivered_at = clock_timestamp() WHERE id = $1`,
    [id, success],
  );
}

const ids = (rows: { id: number }[]) => rows.map((row) => row.id);

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 4);
  const { rows } = await pool.query<{ id: number }>(
    `WITH p AS (INSERT INTO projects (name, slug, from_namespace) VALUES ('shop', 'shop', true) RETURNING id)
     INSERT INTO webhooks (project_id, url, events, enabled, owner)
     SELECT id, 'http://receiver.invalid/hook', '{deployment.created}', true, 'shop/all-deploys' FROM p
     RETURNING id::int`,
  );
  webhookId = rows[0]?.id ?? 0;
});

afterAll(async () => {
  await pool.end();
  await database.drop();
});

describe("DeliveryWatchCursor", () => {
  it("reports each attempt once, when it is recorded, whether it was queued before the watch or after", async () => {
    const queuedBefore = await queue();
    const from = queuedBefore; // a list's resourceVersion taken while it was still queued
    const watch = new DeliveryWatchCursor(pool, shop, from);
    expect(await watch.next()).toEqual([]);
    const queuedAfter = await queue();
    expect(await watch.next()).toEqual([]);
    await record(queuedAfter);
    expect(ids(await watch.next())).toEqual([queuedAfter]);
    await record(queuedBefore, false);
    const [failed] = await watch.next();
    expect(failed).toMatchObject({
      id: queuedBefore,
      success: false,
      status_code: 503,
      webhook: "all-deploys",
    });
    expect(await watch.next()).toEqual([]);
  });

  it("sees a row whose insert committed after a higher id was already seen", async () => {
    const watch = new DeliveryWatchCursor(pool, shop, await queue());
    const slow = await pool.connect();
    try {
      await slow.query("BEGIN");
      const lower = await queue(slow); // its id is taken now, its row visible only at COMMIT
      const higher = await queue();
      await record(higher);
      expect(ids(await watch.next())).toEqual([higher]);
      await slow.query("COMMIT");
      await record(lower);
      expect(ids(await watch.next())).toEqual([lower]);
    } finally {
      slow.release();
    }
  });

  it("lists newest first by keyset, one row over the limit telling that more follow", async () => {
    const page = await listAttempts(pool, shop, { limit: 2, before: undefined });
    expect(page).toHaveLength(3);
    const last = page[1];
    const next = await listAttempts(pool, shop, {
      limit: 2,
      before: last ? { createdAt: last.created_at, id: last.id } : undefined,
    });
    expect(ids(next)[0]).toBe(page[2]?.id);
    const other = await listAttempts(
      pool,
      { namespace: "other", requirements: [] },
      { limit: 2, before: undefined },
    );
    expect(other).toEqual([]);
  });
});
