import { afterAll, beforeAll, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { createProject, createWebhook, emitMany } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService } from "../support/service.js";

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.on("/slow", (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 300));
  receiver.on("/hang", () => {});
});
afterAll(() => receiver.close());

/**
 * Starts a service with `webhooks` webhooks at `path` and emits `count` events to them (so
 * webhooks × count deliveries): several webhooks, because one new webhook starts with a small limit
 * of sends in flight (receiver-limits.ts) and these tests want every slot busy at once.
 */
async function serviceWithBurst(path: string, count: number, webhooks: number, env: Record<string, string>) {
  const service = await startTestService({ DELIVERY_CONCURRENCY: "4", ...env });
  const project = await createProject(service, "p", "P");
  for (let i = 0; i < webhooks; i++) {
    await createWebhook(service, project, { url: `${receiver.url}${path}`, events: ["deployment.created"] });
  }
  await emitMany(service.pool, project, "deployment.created", count);
  return service;
}

async function states(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query("SELECT state, count(*)::int AS n FROM deliveries GROUP BY state");
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}

it("lets in-flight sends finish and records them; queued rows stay queued", async () => {
  const before = receiver.requests.length;
  const service = await serviceWithBurst("/slow", 3, 4, { SHUTDOWN_TIMEOUT_MS: "5000" });
  await receiver.waitFor(before + 4);
  expect((await states(service.pool)).in_flight).toBe(4);

  // The worker stops first (service.close() then ends the pool), so its rows can still be read here.
  await service.engine.stop(5_000);
  const after = await states(service.pool);
  expect(after.in_flight ?? 0).toBe(0);
  expect(after.done).toBeGreaterThanOrEqual(4);
  expect((after.done ?? 0) + (after.queued ?? 0)).toBe(12);
  await service.close();
});

it("hands claims of sends that outlive the shutdown timeout back to the queue", async () => {
  const before = receiver.requests.length;
  const service = await serviceWithBurst("/hang", 1, 3, {
    DELIVERY_TIMEOUT_MS: "10000",
    DELIVERY_LEASE_MS: "30000",
  });
  await receiver.waitFor(before + 3);
  expect((await states(service.pool)).in_flight).toBe(3);
  await service.engine.stop(200);
  const after = await states(service.pool);
  expect(after).toEqual({ queued: 3 });
  await service.close();
});
