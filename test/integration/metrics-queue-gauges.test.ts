import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { registerMetricsEndpoint } from "../../src/app/metrics-endpoint.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { insertProject } from "../../src/projects/store.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { testSecretBox } from "../support/secret-keys.js";

// The queue gauges are read from Postgres at most once per max age, however often /metrics is scraped.

let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 2);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

async function scrapeDepth(app: express.Express): Promise<number> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  server.close();
  return Number(/^webhook_operator_delivery_queue_depth (\d+)$/m.exec(text)?.[1]);
}

function metricsApp(queueStatsMaxAgeMs: number) {
  const router = express.Router();
  registerMetricsEndpoint(router, pool, { queueStatsMaxAgeMs });
  return express().use(router);
}

it("keeps the queue gauges for their max age, then reads them again", async () => {
  const project = await insertProject(pool, { name: "P", slug: "p", repoUrl: null });
  await insertWebhook(pool, testSecretBox(), {
    projectId: project.id,
    url: "https://x.example",
    events: ["deployment.created"],
    enabled: true,
    secret: null,
  });
  const cached = metricsApp(3_600_000);
  const fresh = metricsApp(0);
  expect(await scrapeDepth(cached)).toBe(0);
  await emitEvent(pool, { eventType: "deployment.created", projectId: project.id, payload: {} });
  // No worker runs here: the delivery stays queued.
  expect(await scrapeDepth(cached)).toBe(0);
  expect(await scrapeDepth(fresh)).toBe(1);
});
