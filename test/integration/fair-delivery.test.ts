import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { createProject } from "../support/api-fixtures.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Webhooks whose receivers hang, with a backlog queued, must not keep a webhook the worker does not know
// (a new one, or any webhook after a restart) from its deliveries. Before, a claim took the oldest rows
// (the hanging receivers' backlog), a webhook not known was held to the claim's leftovers, and the
// hanging sends kept their slots until the timeout: the healthy webhook got nothing meanwhile.

// Sends that hang stay open for the whole test (a long timeout), whatever the machine's speed.
const hangingSettings = {
  DELIVERY_CONCURRENCY: "8",
  DELIVERY_TIMEOUT_MS: "120000",
  DELIVERY_LEASE_MS: "140000",
  // Closing must not wait for the sends that hang (they go back to the queue).
  SHUTDOWN_TIMEOUT_MS: "200",
};

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.on("/hangs", () => {});
});
afterAll(() => receiver.close());

async function webhook(
  service: TestService,
  projectId: number,
  path: string,
  event: string,
): Promise<number> {
  const created = await service.api("POST", `/projects/${projectId}/webhooks`, {
    body: { url: `${receiver.url}${path}`, events: [event] },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function emit(service: TestService, projectId: number, count: number, eventType: string) {
  await withTransaction(service.pool, (client) =>
    emitEvents(
      client,
      Array.from({ length: count }, () => ({
        eventType: eventType as "deployment.created",
        projectId,
        payload: {},
      })),
    ),
  );
}

async function count(service: TestService, webhookIds: number[], where: string): Promise<number> {
  const { rows } = await service.pool.query(
    `SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ANY ($1) AND ${where}`,
    [webhookIds],
  );
  return rows[0].n;
}

/** Six webhooks whose receiver never answers, ten deliveries queued for each. */
async function hangingBacklog(service: TestService, projectId: number): Promise<number[]> {
  const hanging: number[] = [];
  for (let i = 0; i < 6; i++) hanging.push(await webhook(service, projectId, "/hangs", "deployment.created"));
  await emit(service, projectId, 10, "deployment.created");
  return hanging;
}

describe("webhooks behind a backlog of receivers that hang", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it("delivers to a webhook created after the backlog while the hanging sends stay open", async () => {
    const service = await startTestService(hangingSettings);
    try {
      const project = await createProject(service, "n", "N");
      const hanging = await hangingBacklog(service, project);
      // Every slot hangs before the new webhook exists.
      await waitUntil("(await count(service, hanging, \"state = 'in_flight'\")) === 8", async () =>
        (await count(service, hanging, "state = 'in_flight'")) === 8 ? true : undefined,
      );
      const healthy = await webhook(service, project, "/new", "deployment.succeeded");
      await emit(service, project, 20, "deployment.succeeded");
      await waitUntil(
        '(await count(service, [healthy], "success")) === 20',
        async () => ((await count(service, [healthy], "success")) === 20 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      // They went out while the hanging sends stayed open (nothing of theirs ended meanwhile).
      expect(await count(service, hanging, "state = 'done'")).toBe(0);
      expect(await count(service, hanging, "state = 'in_flight'")).toBeGreaterThan(0);
    } finally {
      await service.close();
    }
  });

  it("delivers to a known healthy webhook after a restart, ahead of the hanging receivers' backlog", async () => {
    const first = await startTestService(hangingSettings, { database });
    let project: number;
    let healthy: number;
    let hanging: number[];
    try {
      project = await createProject(first, "r", "R");
      healthy = await webhook(first, project, "/known", "deployment.succeeded");
      await emit(first, project, 1, "deployment.succeeded");
      await waitUntil('(await count(first, [healthy], "success")) === 1', async () =>
        (await count(first, [healthy], "success")) === 1 ? true : undefined,
      );
      hanging = await hangingBacklog(first, project);
      await waitUntil("(await count(first, hanging, \"state = 'in_flight'\")) === 8", async () =>
        (await count(first, hanging, "state = 'in_flight'")) === 8 ? true : undefined,
      );
    } finally {
      await first.close(); // SIGTERM: the hanging sends go back to the queue
    }
    const restarted = await startTestService(hangingSettings, { database });
    try {
      await emit(restarted, project, 20, "deployment.succeeded");
      await waitUntil(
        '(await count(restarted, [healthy], "success")) === 21',
        async () => ((await count(restarted, [healthy], "success")) === 21 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      expect(await count(restarted, hanging, "state = 'done'")).toBe(0);
    } finally {
      await restarted.close();
    }
  });
});
