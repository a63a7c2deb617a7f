import { beforeEach, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { insertLeasedDelivery } from "../../src/delivery-engine/queue.js";
import { createLogger } from "../../src/logger.js";
import { removeEvents } from "../../src/retention/store.js";
import { type RetentionSettings, startRetentionSweeper, sweepLock } from "../../src/retention/sweeper.js";
import { onNewDatabase, resetToOneWebhook } from "../support/new-database.js";

// Retention against a real Postgres: what expires goes, what a delivery in progress or a kept attempt
// still needs stays, and passes are bounded batches that one replica runs at a time.

let pool: Pool;
let projectId: number;
let webhookId: number;
const logger = createLogger("silent");
const dayMs = 24 * 60 * 60 * 1000;
const settings: RetentionSettings = {
  days: 30,
  intervalMs: 3_600_000,
  batchSize: 3,
  pauseMs: 0,
  restPerWorkMs: 0,
};

onNewDatabase((created) => (pool = created), 4);
beforeEach(async () => {
  ({ projectId, webhookId } = await resetToOneWebhook(pool));
});

/** Records an event with its first attempt, `ageDays` old; finished unless `finished` is false. */
async function recordEvent(
  ageDays: number,
  finished = true,
): Promise<{ eventId: string; deliveryId: number }> {
  const { envelope } = await emitEvent(pool, { eventType: "deployment.created", projectId, payload: {} });
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE deliveries SET created_at = created_at - $2 * interval '1 day'
       ${finished ? ", state = 'done', success = true, status_code = 200, response_body = '', delivered_at = now()" : ""}
      WHERE event_id = $1 RETURNING id`,
    [envelope.id, ageDays],
  );
  await pool.query("UPDATE events SET created_at = created_at - $2 * interval '1 day' WHERE id = $1", [
    envelope.id,
    ageDays,
  ]);
  return { eventId: envelope.id, deliveryId: Number(rows[0]?.id) };
}

async function remaining(): Promise<{ deliveries: number[]; events: string[] }> {
  const deliveries = await pool.query<{ id: string }>("SELECT id FROM deliveries ORDER BY id");
  const events = await pool.query<{ id: string }>("SELECT id FROM events ORDER BY created_at");
  return { deliveries: deliveries.rows.map((r) => Number(r.id)), events: events.rows.map((r) => r.id) };
}

describe("a retention pass", () => {
  it("removes the attempts and events older than the period, in batches, and keeps the rest", async () => {
    const expired = [];
    for (let i = 0; i < 7; i++) expired.push(await recordEvent(40));
    const kept = [await recordEvent(29), await recordEvent(1)];
    // A gap in the ids, like one a deleted webhook leaves: the walk skips it.
    await pool.query("SELECT setval(pg_get_serial_sequence('deliveries', 'id'), 1000)");
    kept.push(await recordEvent(0));

    const sweeper = startRetentionSweeper({ pool, settings, logger });
    expect(await sweeper.sweep()).toEqual({ deliveries: 7, events: 7 });
    expect(await remaining()).toEqual({
      deliveries: kept.map((k) => k.deliveryId),
      events: kept.map((k) => k.eventId),
    });
    // Nothing left to do: a second pass removes nothing.
    expect(await sweeper.sweep()).toEqual({ deliveries: 0, events: 0 });
    await sweeper.stop();
  });

  it("never touches a delivery in progress, nor the event it will send", async () => {
    const queued = await recordEvent(40, false);
    await pool.query(
      "UPDATE deliveries SET state = 'in_flight', locked_by = 'w', locked_until = now() + interval '1 minute' WHERE id = $1",
      [queued.deliveryId],
    );
    const done = await recordEvent(40);
    const sweeper = startRetentionSweeper({ pool, settings, logger });
    expect(await sweeper.sweep()).toEqual({ deliveries: 1, events: 1 });
    expect(await remaining()).toEqual({ deliveries: [queued.deliveryId], events: [queued.eventId] });
    expect(done.deliveryId).not.toBe(queued.deliveryId);
    await sweeper.stop();
  });

  it("keeps an old event while an automatic retry of it waits", async () => {
    const old = await recordEvent(40);
    await pool.query(
      `INSERT INTO scheduled_retries (webhook_id, event_id, event_type, attempt_number, due_at)
       VALUES ($1, $2, 'deployment.created', 2, now() + interval '1 hour')`,
      [webhookId, old.eventId],
    );
    const sweeper = startRetentionSweeper({ pool, settings, logger });
    expect(await sweeper.sweep()).toEqual({ deliveries: 1, events: 0 });
    expect(await remaining()).toEqual({ deliveries: [], events: [old.eventId] });
    await pool.query("DELETE FROM scheduled_retries");
    expect(await sweeper.sweep()).toEqual({ deliveries: 0, events: 1 });
    await sweeper.stop();
  });

  it("keeps an old event while a younger replay of it is kept, and the replay keeps its payload", async () => {
    const old = await recordEvent(40);
    const replay = await insertLeasedDelivery(
      pool,
      { webhookId, eventId: old.eventId, eventType: "deployment.created", attemptNumber: null },
      { workerId: "w", leaseMs: 60_000 },
    );
    await pool.query(
      "UPDATE deliveries SET state = 'done', success = true, status_code = 200, response_body = '', delivered_at = now() WHERE id = $1",
      [replay?.id],
    );
    const sweeper = startRetentionSweeper({ pool, settings, logger });
    expect(await sweeper.sweep()).toEqual({ deliveries: 1, events: 0 });
    expect(await remaining()).toEqual({ deliveries: [Number(replay?.id)], events: [old.eventId] });
    await sweeper.stop();
  });

  it("removes old events that never had a delivery", async () => {
    await pool.query("UPDATE webhooks SET enabled = false");
    const old = await recordEvent(40);
    const young = await recordEvent(2);
    const sweeper = startRetentionSweeper({ pool, settings, logger });
    expect(await sweeper.sweep()).toEqual({ deliveries: 0, events: 1 });
    expect(await remaining()).toEqual({ deliveries: [], events: [young.eventId] });
    expect(old.eventId).not.toBe(young.eventId);
    await sweeper.stop();
  });

  it("skips an event a replay has locked, and the replay of a removed event finds none", async () => {
    const old = await recordEvent(40);
    await pool.query("DELETE FROM deliveries");
    const replaying = await pool.connect();
    try {
      await replaying.query("BEGIN");
      await replaying.query("SELECT 1 FROM events WHERE id = $1 FOR KEY SHARE", [old.eventId]);
      expect(await removeEvents(pool, new Date(Date.now() - 30 * dayMs), 10)).toBe(0);
      await replaying.query("COMMIT");
    } finally {
      replaying.release();
    }
    expect(await removeEvents(pool, new Date(Date.now() - 30 * dayMs), 10)).toBe(1);
    const replay = await insertLeasedDelivery(
      pool,
      { webhookId, eventId: old.eventId, eventType: "deployment.created", attemptNumber: null },
      { workerId: "w", leaseMs: 60_000 },
    );
    expect(replay).toBeUndefined();
    expect(await remaining()).toEqual({ deliveries: [], events: [] });
  });

  it("does nothing with RETENTION_DAYS=0, or while another replica's pass holds the lock", async () => {
    const old = await recordEvent(400);
    const off = startRetentionSweeper({ pool, settings: { ...settings, days: 0 }, logger });
    expect(await off.sweep()).toBeNull();
    await off.stop();

    const other = await pool.connect();
    const sweeper = startRetentionSweeper({ pool, settings, logger });
    try {
      await other.query("SELECT pg_advisory_lock($1)", [sweepLock]);
      expect(await sweeper.sweep()).toBeNull();
      expect(await remaining()).toEqual({ deliveries: [old.deliveryId], events: [old.eventId] });
      await other.query("SELECT pg_advisory_unlock($1)", [sweepLock]);
    } finally {
      other.release();
    }
    expect(await sweeper.sweep()).toEqual({ deliveries: 1, events: 1 });
    await sweeper.stop();
  });
});
