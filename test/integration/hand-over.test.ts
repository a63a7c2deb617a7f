import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents, type HandOver } from "../../src/delivery-engine/emit.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { createTestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Deliveries an emit hands straight to the worker of its own process (emit.ts, hand-over.ts), and
// outcomes recorded together at moderate rates (worker.ts): each attempt is still sent and recorded
// once, and the rows stay leased like claimed ones, so another replica takes over after a crash.

let service: TestService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  // The default 60 s lease: a row delivered within the test's waits was never claimed by a poll.
  service = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "200" });
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

const event = { eventType: "deployment.created" as const, payload: {} };
const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path);

async function rowsOf(webhookId: number) {
  const { rows } = await service.pool.query(
    `SELECT state, locked_by, success, status_code, attempt_number FROM deliveries
      WHERE webhook_id = $1 ORDER BY id`,
    [webhookId],
  );
  return rows;
}

/** A project of its own with one webhook, at the receiver's `path`. */
async function newWebhook(path: string) {
  const projectId = await createProject(service, path.slice(1));
  const webhook = await createWebhook(service, projectId, {
    url: `${receiver.url}${path}`,
    events: [event.eventType],
  });
  return { projectId, webhookId: webhook.id as number };
}

describe("handing deliveries over at emit", () => {
  it("inserts them leased to the local worker, which sends them without claiming", async () => {
    const { projectId, webhookId } = await newWebhook("/handed");
    const handOver = service.engine.handOverLease();
    expect(handOver?.workerId).toBe(service.engine.lease.workerId);
    const { handedOver, queued } = await withTransaction(service.pool, (client) =>
      emitEvents(client, [{ ...event, projectId }], handOver),
    );
    expect(queued).toBe(1);
    expect(handedOver.map((delivery) => delivery.webhook_id)).toEqual([webhookId]);
    // Committed, not handed yet: leased as a claim leases, so no worker claims it for a minute.
    expect(await rowsOf(webhookId)).toMatchObject([
      { state: "in_flight", locked_by: service.engine.lease.workerId },
    ]);
    service.engine.handOver(handedOver);
    await waitUntil('(await rowsOf(webhookId))[0]?.state === "done"', async () =>
      (await rowsOf(webhookId))[0]?.state === "done" ? true : undefined,
    );
    expect(await rowsOf(webhookId)).toEqual([
      { state: "done", locked_by: null, success: true, status_code: 200, attempt_number: 1 },
    ]);
    expect(requestsTo("/handed")).toHaveLength(1);
  });

  it("is taken over by another replica when the one it was handed to dies before sending", async () => {
    const { projectId, webhookId } = await newWebhook("/orphaned");
    // What a replica that crashed right after its emit committed leaves behind: rows leased to it.
    const crashed: HandOver = {
      workerId: "crashed-replica",
      leaseMs: 300,
      limit: 10,
      allowances: new Map(),
      defaultAllowance: 2,
    };
    const { handedOver } = await withTransaction(service.pool, (client) =>
      emitEvents(client, [{ ...event, projectId }], crashed),
    );
    expect(handedOver).toHaveLength(1);
    expect(await rowsOf(webhookId)).toMatchObject([{ state: "in_flight", locked_by: "crashed-replica" }]);
    await waitUntil('(await rowsOf(webhookId))[0]?.state === "done"', async () =>
      (await rowsOf(webhookId))[0]?.state === "done" ? true : undefined,
    );
    expect(await rowsOf(webhookId)).toEqual([
      { state: "done", locked_by: null, success: true, status_code: 200, attempt_number: 1 },
    ]);
    expect(requestsTo("/orphaned")).toHaveLength(1);
  });

  it("queues every delivery of an emit the worker has no room for, or of a burst, and wakes the workers", async () => {
    const { projectId, webhookId } = await newWebhook("/queued");
    const lease = service.engine.handOverLease() as HandOver;
    const roomy = { ...lease, limit: 100, allowances: new Map([[webhookId, 100]]) };
    for (const [handOver, events] of [
      [{ ...lease, limit: 2 }, 3],
      [{ ...lease, allowances: new Map([[webhookId, 2]]) }, 3],
      [roomy, 4], // more events than a rollout step emits: a burst
    ] as const) {
      const { handedOver, queued } = await withTransaction(service.pool, (client) =>
        emitEvents(
          client,
          Array.from({ length: events }, () => ({ ...event, projectId })),
          handOver,
        ),
      );
      expect([handedOver, queued]).toEqual([[], events]);
    }
    await waitUntil('rows.length === 10 && rows.every((row) => row.state === "done")', async () => {
      const rows = await rowsOf(webhookId);
      return rows.length === 10 && rows.every((row) => row.state === "done") ? rows : undefined;
    });
    expect(requestsTo("/queued")).toHaveLength(10);
  });
});

describe("handing over a rollout step of several events", () => {
  it("hands them over in the order given, and only within the allowance of a webhook the worker has not seen", async () => {
    const projectId = await createProject(service, "steps");
    const eventTypes = ["deployment.created", "deployment.ready", "deployment.succeeded"] as const;
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/steps`,
      events: [...eventTypes],
    });
    const webhookId = webhook.id as number;
    const lease = service.engine.handOverLease() as HandOver;
    const steps = eventTypes.map((eventType) => ({ eventType, projectId, payload: {} }));
    const emit = (handOver: HandOver) =>
      withTransaction(service.pool, (client) => emitEvents(client, steps, handOver));
    const unseen = { ...lease, limit: 100, allowances: new Map(), defaultAllowance: 2 };
    expect(await emit(unseen)).toMatchObject({ queued: 3, handedOver: [] });
    const roomy = { ...unseen, defaultAllowance: 3 };
    const { handedOver } = await emit(roomy);
    expect(handedOver.map((delivery) => delivery.event_type)).toEqual([...eventTypes]);
    expect(handedOver.map((delivery) => delivery.id)).toEqual(
      handedOver.map((d) => d.id).sort((a, b) => a - b),
    );
    service.engine.handOver(handedOver);
    await waitUntil('rows.length === 6 && rows.every((row) => row.state === "done")', async () => {
      const rows = await rowsOf(webhookId);
      return rows.length === 6 && rows.every((row) => row.state === "done") ? rows : undefined;
    });
  });
});

describe("handing over a rollout's events", () => {
  it("hands over a rollout's first event, and queues its later ones for the claim to order", async () => {
    const projectId = await createProject(service, "rollout-steps");
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/rollout-steps`,
      events: ["deployment.created", "deployment.ready"],
    });
    const webhookId = webhook.id as number;
    const step = (eventType: "deployment.created" | "deployment.ready", position: number) =>
      withTransaction(service.pool, (client) =>
        emitEvents(
          client,
          [{ eventType, projectId, payload: {}, rollout: { id: 2_000_001, position } }],
          service.engine.handOverLease(),
        ),
      );
    const first = await step("deployment.created", 0);
    expect(first.handedOver.map((delivery) => delivery.event_type)).toEqual(["deployment.created"]);
    service.engine.handOver(first.handedOver);
    await waitUntil("the first event delivered", async () =>
      (await rowsOf(webhookId))[0]?.state === "done" ? true : undefined,
    );
    // Its earlier event finished: a claim would take it now, yet only the claim decides the order.
    const later = await step("deployment.ready", 1);
    expect([later.handedOver, later.queued]).toEqual([[], 1]);
    await waitUntil("the later event delivered by a claim", async () => {
      const rows = await rowsOf(webhookId);
      return rows.length === 2 && rows.every((row) => row.state === "done") ? rows : undefined;
    });
    expect(requestsTo("/rollout-steps")).toHaveLength(2);
  });
});

describe("outcomes recorded together", () => {
  it("records every attempt, failed and successful, and those still waiting when the service stops", async () => {
    const database = await createTestDatabase();
    const own = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "200" }, { database });
    try {
      const project = await createProject(own, "grouped");
      receiver.on("/grouped-fails", (_request, res) => res.writeHead(500).end("no"));
      await Promise.all(
        ["/grouped-ok", "/grouped-fails"].map(
          async (path) =>
            (await createWebhook(own, project, { url: `${receiver.url}${path}`, events: [event.eventType] }))
              .id,
        ),
      );
      // One event per transaction, as a moderate rate emits them: outcomes finish one by one.
      for (let i = 0; i < 12; i++) {
        await withTransaction(own.pool, (client) => emitEvents(client, [{ ...event, projectId: project }]));
      }
      await waitUntil(
        'requestsTo("/grouped-ok").length === 12 && requestsTo("/grouped-fails").length === 12',
        async () =>
          requestsTo("/grouped-ok").length === 12 && requestsTo("/grouped-fails").length === 12
            ? true
            : undefined,
      );
    } finally {
      // At once: outcomes waiting to be grouped are recorded by the shutdown, not dropped.
      await own.close();
    }
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT w.url LIKE '%fails' AS failing, d.state, d.status_code, count(*)::int AS n
           FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
          GROUP BY 1, 2, 3 ORDER BY 1`,
      );
      expect(rows).toEqual([
        { failing: false, state: "done", status_code: 200, n: 12 },
        { failing: true, state: "done", status_code: 500, n: 12 },
      ]);
    } finally {
      await db.end();
      await database.drop();
    }
  });
});
