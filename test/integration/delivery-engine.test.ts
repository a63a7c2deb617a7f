import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Queryable, withTransaction } from "../../src/db/pool.js";
import { emitEvent, emitEvents } from "../../src/delivery-engine/emit.js";
import { insertLeasedDelivery } from "../../src/delivery-engine/queue.js";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { blockedBy } from "../support/lock-waits.js";
import { freePort as closedPort } from "../support/ports.js";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startTestService({
    DELIVERY_TIMEOUT_MS: "500",
    DELIVERY_POLL_INTERVAL_MS: "200",
    METRICS_TOKEN: "delivery-engine-metrics",
  });
  projectId = await createProject(service, "shop", "Shop");
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

const newWebhook = async (body: Record<string, unknown>) =>
  (await createWebhook(service, projectId, body)).id;

/** The §4.1 headers a receiver got, named as the delivery record's request_headers names them. */
function headersReceived(request: ReceivedRequest): Record<string, string> {
  const names = [
    "Content-Type",
    "X-Webhook-Event",
    "X-Webhook-Delivery",
    "X-Webhook-Timestamp",
    "X-Webhook-Signature",
  ];
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = request.headers[name.toLowerCase()];
      return typeof value === "string" ? [[name, value]] : [];
    }),
  );
}

async function waitForDeliveries(webhookId: number, count: number) {
  return waitUntil("list.length >= count", async () => {
    const list = await deliveriesOf(service, projectId, webhookId);
    return list.length >= count ? list : undefined;
  });
}

describe("emitting and delivering", () => {
  it("delivers the stored envelope byte for byte with the spec's headers and a verifiable signature", async () => {
    const secret = "whsec-signing-secret";
    const webhookId = await newWebhook({
      url: `${receiver.url}/signed`,
      events: ["deployment.created"],
      secret,
    });
    const before = receiver.requests.length;
    const emitted = await emit(service.pool, projectId, "deployment.created");
    expect(emitted.queued).toBe(1);

    const [delivery] = await waitForDeliveries(webhookId, 1);
    const request = receiver.requests.slice(before).find((r) => r.path === "/signed");
    expect(request).toBeDefined();
    if (!request || !delivery) return;

    expect(request.method).toBe("POST");
    expect(request.body).toBe(emitted.body);
    expect(delivery.payload).toBe(emitted.body);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-webhook-event"]).toBe("deployment.created");
    expect(request.headers["x-webhook-delivery"]).toBe(String(delivery.id));
    const timestamp = request.headers["x-webhook-timestamp"] as string;
    expect(timestamp).toMatch(/^\d{10}$/);
    // Sent after the event was recorded and before the receiver saw it (whole seconds).
    expect(Number(timestamp)).toBeGreaterThanOrEqual(
      Math.floor(Date.parse(String(delivery.created_at)) / 1000) - 1,
    );
    expect(Number(timestamp)).toBeLessThanOrEqual(Math.ceil(request.receivedAt / 1000));

    const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${request.body}`).digest("hex")}`;
    const received = request.headers["x-webhook-signature"] as string;
    expect(received).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(timingSafeEqual(Buffer.from(received), Buffer.from(expected))).toBe(true);

    const envelope = JSON.parse(request.body);
    expect(Object.keys(envelope)).toEqual(["id", "event_type", "timestamp", "project_id", "payload"]);
    // A UUIDv7: time-ordered, its first 48 bits the event's timestamp in milliseconds.
    expect(envelope.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(envelope.event_type).toBe("deployment.created");
    expect(envelope.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Number.parseInt(envelope.id.replace("-", "").slice(0, 12), 16)).toBe(
      Date.parse(envelope.timestamp),
    );
    expect(envelope.project_id).toBe(projectId);

    expect(delivery).toMatchObject({
      webhook_id: webhookId,
      event_type: "deployment.created",
      event_id: envelope.id,
      success: true,
      status_code: 200,
      response_body: "ok",
      error_message: null,
      attempt_number: 1,
    });
    // The record shows the request exactly as it went out, signature included.
    expect(delivery.request_headers).toEqual(headersReceived(request));
    expect(Object.keys(headersReceived(request))).toHaveLength(5);
  });

  it("stores and sends every envelope of a batch byte for byte, whatever text its payload holds", async () => {
    const webhookId = await newWebhook({ url: `${receiver.url}/batch`, events: ["deployment.failed"] });
    // Newlines, quotes, backslashes, braces, commas and non-ASCII: the batch travels as one text and
    // must come apart exactly at the envelope boundaries.
    const messages = ["line one\nline two\r\n", 'say "hi", {x}\\', "déploiement ✓ 🚀 \u2028 \t end"];
    const { emitted, queued } = await withTransaction(service.pool, (client) =>
      emitEvents(
        client,
        messages.map((error_message) => ({
          eventType: "deployment.failed" as const,
          projectId,
          payload: { deployment_id: 1, error_message },
        })),
      ),
    );
    expect(queued).toBe(3);
    const { rows } = await service.pool.query<{ envelope: string }>(
      "SELECT envelope FROM events WHERE id = ANY ($1::uuid[]) ORDER BY array_position($1::uuid[], id)",
      [emitted.map((e) => e.envelope.id)],
    );
    expect(rows.map((r) => r.envelope)).toEqual(emitted.map((e) => e.body));
    expect(emitted.map((e) => JSON.parse(e.body).payload.error_message)).toEqual(messages);

    const deliveries = await waitForDeliveries(webhookId, 3);
    const bodies = receiver.requests.filter((r) => r.path === "/batch").map((r) => r.body);
    expect(bodies.sort()).toEqual(emitted.map((e) => e.body).sort());
    // Queued in the order given.
    expect(deliveries.map((d) => d.event_id).reverse()).toEqual(emitted.map((e) => e.envelope.id));
  });

  it("sends unsigned when the webhook has no secret", async () => {
    const webhookId = await newWebhook({ url: `${receiver.url}/unsigned`, events: ["deployment.failed"] });
    await emit(service.pool, projectId, "deployment.failed");
    await waitForDeliveries(webhookId, 1);
    const request = receiver.requests.find((r) => r.path === "/unsigned");
    expect(request?.headers["x-webhook-signature"]).toBeUndefined();
    expect(request?.headers["x-webhook-event"]).toBe("deployment.failed");
    const [delivery] = await deliveriesOf(service, projectId, webhookId);
    if (!request) throw new Error("the receiver got nothing");
    expect(delivery?.request_headers).toEqual(headersReceived(request));
    expect(delivery?.request_headers).not.toHaveProperty("X-Webhook-Signature");
  });

  it("queues nothing for disabled webhooks or webhooks not subscribed to the event", async () => {
    const disabled = await newWebhook({
      url: `${receiver.url}/disabled`,
      events: ["deployment.succeeded"],
      enabled: false,
    });
    const otherEvent = await newWebhook({ url: `${receiver.url}/other`, events: ["deployment.failed"] });
    const subscribed = await newWebhook({
      url: `${receiver.url}/subscribed`,
      events: ["deployment.succeeded"],
    });
    const emitted = await emit(service.pool, projectId, "deployment.succeeded");
    await waitForDeliveries(subscribed, 1);
    const { rows } = await service.pool.query("SELECT webhook_id FROM deliveries WHERE event_id = $1", [
      emitted.envelope.id,
    ]);
    expect(rows.map((r) => r.webhook_id)).toEqual([subscribed]);
    expect(receiver.requests.some((r) => r.path === "/disabled" || r.path === "/other")).toBe(false);
    expect(await deliveriesOf(service, projectId, disabled)).toEqual([]);
    expect(await deliveriesOf(service, projectId, otherEvent)).toEqual([]);
  });
});

describe("failure outcomes (spec §7)", () => {
  async function failedDelivery(url: string) {
    const webhookId = await newWebhook({ url, events: ["deployment.succeeded"] });
    const emitted = await emit(service.pool, projectId, "deployment.succeeded");
    const delivery = await waitUntil("the delivery done", async () => {
      const { rows } = await service.pool.query(
        "SELECT * FROM deliveries WHERE webhook_id = $1 AND event_id = $2 AND state = 'done'",
        [webhookId, emitted.envelope.id],
      );
      return rows[0];
    });
    return { webhookId, delivery };
  }

  it("records a refused connection with status_code 0", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    const { delivery } = await failedDelivery(url);
    expect(delivery.success).toBe(false);
    expect(delivery.status_code).toBe(0);
    expect(delivery.response_body).toBe("");
    expect(delivery.error_message).toBe(
      `Connection failed to ${url}. The receiver may not be running, the URL may be wrong, or the endpoint may not be listening on the right port.`,
    );
  });

  it("records a receiver that never answers as a timeout", async () => {
    receiver.on("/hang", () => {});
    const url = `${receiver.url}/hang`;
    const { delivery } = await failedDelivery(url);
    expect(delivery.status_code).toBe(0);
    expect(delivery.error_message).toBe(
      `Request timeout after 0.5 seconds. The endpoint ${url} did not respond in time; check that the receiver responds quickly.`,
    );
  });

  it.each([
    [404, "Not Found"],
    [500, "Internal Server Error"],
    [302, "Found"],
  ])("records HTTP %i with its reason phrase and the body", async (status, reason) => {
    const path = `/status-${status}`;
    receiver.on(path, (_req, res) =>
      res.writeHead(status, { location: `${receiver.url}/elsewhere` }).end("nope"),
    );
    const url = `${receiver.url}${path}`;
    const { delivery } = await failedDelivery(url);
    expect(delivery.success).toBe(false);
    expect(delivery.status_code).toBe(status);
    expect(delivery.response_body).toBe("nope");
    expect(delivery.error_message).toBe(
      `HTTP ${status} error from ${url}: ${reason}. The endpoint rejected the request.`,
    );
    expect(receiver.requests.some((r) => r.path === "/elsewhere")).toBe(false);
  });
});

describe("deleting a webhook", () => {
  async function isolatedWebhook(slug: string, path: string) {
    const project = await createProject(service, slug);
    const webhook = await createWebhook(service, project, {
      url: `${receiver.url}${path}`,
      events: ["deployment.created"],
    });
    return { projectId: project, webhookId: webhook.id };
  }
  const emitTo = (db: Queryable, project: number) =>
    emitEvents(db, [{ eventType: "deployment.created", projectId: project, payload: { deployment_id: 1 } }]);
  const rowsOf = async (webhookId: number) =>
    (await service.pool.query("SELECT id FROM deliveries WHERE webhook_id = $1", [webhookId])).rowCount;

  it("takes its finished and unfinished deliveries along", async () => {
    receiver.on("/deleted-later", () => {}); // never answers: its deliveries stay in flight
    const { projectId: project, webhookId } = await isolatedWebhook("gone", "/deleted-later");
    await withTransaction(service.pool, (client) => emitTo(client, project));
    await withTransaction(service.pool, (client) => emitTo(client, project));
    await service.pool.query(
      "UPDATE deliveries SET state = 'done', delivered_at = now(), success = false, status_code = 0, locked_by = NULL, locked_until = NULL WHERE id = (SELECT min(id) FROM deliveries WHERE webhook_id = $1)",
      [webhookId],
    );
    expect(await rowsOf(webhookId)).toBe(2);
    const removed = await service.api("DELETE", `/projects/${project}/webhooks/${webhookId}`);
    expect(removed.status).toBe(204);
    expect(await rowsOf(webhookId)).toBe(0);

    // A retry or test event that read the webhook before the delete writes nothing (the API then
    // answers 404): the leased insert finds no webhook row to lock.
    const late = await insertLeasedDelivery(
      service.pool,
      {
        webhookId,
        eventId: "0b6e1f7c-2f1a-4c55-9d1e-6f3a2b1c0d9e",
        eventType: "deployment.created",
        attemptNumber: null,
      },
      { workerId: "test", leaseMs: 1_000 },
    );
    expect(late).toBeUndefined();
    expect(await rowsOf(webhookId)).toBe(0);
  });

  it("waits for an uncommitted emit and removes what it queued", async () => {
    const { projectId: project, webhookId } = await isolatedWebhook("racing-emit", "/racing-emit");
    const emitter = await service.pool.connect();
    try {
      await emitter.query("BEGIN");
      expect((await emitTo(emitter, project)).queued).toBe(1);
      let deleted = false;
      const deleting = service
        .api("DELETE", `/projects/${project}/webhooks/${webhookId}`)
        .then((response) => {
          deleted = true;
          return response;
        });
      await blockedBy(service.pool, emitter);
      expect(deleted).toBe(false); // blocked on the emit's lock of the webhook row
      await emitter.query("COMMIT");
      expect((await deleting).status).toBe(204);
    } finally {
      emitter.release();
    }
    expect(await rowsOf(webhookId)).toBe(0);
  });

  it("queues nothing for a webhook whose deletion commits while an emit waits for it", async () => {
    const { projectId: project, webhookId } = await isolatedWebhook("racing-delete", "/racing-delete");
    const deleter = await service.pool.connect();
    try {
      await deleter.query("BEGIN");
      await deleter.query("DELETE FROM webhooks WHERE id = $1", [webhookId]);
      const emitting = withTransaction(service.pool, (client) => emitTo(client, project));
      await blockedBy(service.pool, deleter);
      await deleter.query("COMMIT");
      expect((await emitting).queued).toBe(0);
    } finally {
      deleter.release();
    }
    expect(await rowsOf(webhookId)).toBe(0);
  });
});

describe("replay (endpoint 9)", () => {
  it("re-sends a failed delivery as a new record with the same event id and a higher attempt number", async () => {
    let answer = 503;
    receiver.on("/flaky", (_req, res) => res.writeHead(answer).end());
    const webhookId = await newWebhook({ url: `${receiver.url}/flaky`, events: ["deployment.succeeded"] });
    const emitted = await emit(service.pool, projectId, "deployment.succeeded");
    const [failed] = await waitForDeliveries(webhookId, 1);
    expect(failed?.success).toBe(false);

    answer = 200;
    const retryPath = `/projects/${projectId}/webhooks/${webhookId}/deliveries/${failed?.id}/retry`;
    const retried = await service.api("POST", retryPath);
    expect(retried.status).toBe(200);
    const records = await deliveriesOf(service, projectId, webhookId);
    expect(records).toHaveLength(2);
    const newest = records[0];
    // The retry result names the new attempt's record.
    expect(retried.body).toEqual({
      success: true,
      status_code: 200,
      error_message: null,
      attempt_number: 2,
      delivery_id: newest?.id,
    });
    expect(newest).toMatchObject({ event_id: emitted.envelope.id, attempt_number: 2, success: true });
    expect(newest?.duration_ms).toEqual(expect.any(Number));
    expect(newest?.payload).toBe(emitted.body);
    const lastRequest = receiver.requests.filter((r) => r.path === "/flaky").at(-1);
    expect(lastRequest?.body).toBe(emitted.body);
    expect(lastRequest?.headers["x-webhook-delivery"]).toBe(String(newest?.id));
    if (!lastRequest) throw new Error("the receiver got no replay");
    expect(newest?.request_headers).toEqual(headersReceived(lastRequest));

    // Retrying the first record again numbers from the highest attempt of the event, not from it.
    const again = await service.api("POST", retryPath);
    expect(again.body.attempt_number).toBe(3);
    // A successful delivery can be re-sent too (receivers deduplicate by event id).
    const ofSuccess = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${webhookId}/deliveries/${newest?.id}/retry`,
    );
    expect(ofSuccess.body).toMatchObject({ success: true, attempt_number: 4 });

    // Concurrent retries of one event collide on the retry index; each gets its own number.
    const concurrent = await Promise.all([1, 2, 3].map(() => service.api("POST", retryPath)));
    expect(concurrent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(concurrent.map((r) => r.body.attempt_number).sort()).toEqual([5, 6, 7]);
  });

  it("reports a failing retry with its message, answers 409 on a disabled webhook and 404 for unknown ids", async () => {
    receiver.on("/down", (_req, res) => res.writeHead(500).end());
    const webhookId = await newWebhook({ url: `${receiver.url}/down`, events: ["deployment.failed"] });
    await emit(service.pool, projectId, "deployment.failed");
    const [failed] = await waitForDeliveries(webhookId, 1);
    const retryPath = `/projects/${projectId}/webhooks/${webhookId}/deliveries/${failed?.id}/retry`;

    const retried = await service.api("POST", retryPath);
    expect(retried.body).toEqual({
      success: false,
      status_code: 500,
      error_message: `HTTP 500 error from ${receiver.url}/down: Internal Server Error. The endpoint rejected the request.`,
      attempt_number: 2,
      delivery_id: expect.any(Number),
    });

    await service.api("PUT", `/projects/${projectId}/webhooks/${webhookId}`, { body: { enabled: false } });
    const onDisabled = await service.api("POST", retryPath);
    expect(onDisabled.status).toBe(409);
    expect(onDisabled.body.error.code).toBe("conflict");
    expect(await deliveriesOf(service, projectId, webhookId)).toHaveLength(2);

    const unknown = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${webhookId}/deliveries/999999/retry`,
    );
    expect(unknown.status).toBe(404);
    const otherWebhook = await newWebhook({ url: `${receiver.url}/x`, events: ["deployment.failed"] });
    const crossed = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${otherWebhook}/deliveries/${failed?.id}/retry`,
    );
    expect(crossed.status).toBe(404);
  });
});

describe("test events", () => {
  it("sends an example envelope of the chosen type, recorded as a delivery, even to a disabled webhook", async () => {
    const webhookId = await newWebhook({
      url: `${receiver.url}/test-target`,
      events: ["deployment.created"],
      enabled: false,
    });
    const sent = await service.api("POST", `/projects/${projectId}/webhooks/${webhookId}/test`, {
      body: { event_type: "deployment.failed" },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      success: true,
      status_code: 200,
      error_message: null,
      attempt_number: 1,
    });

    const request = receiver.requests.find((r) => r.path === "/test-target");
    const envelope = JSON.parse(request?.body ?? "{}");
    expect(envelope.id).toBe(sent.body.event_id);
    expect(envelope.event_type).toBe("deployment.failed");
    expect(envelope.payload).toMatchObject({
      project_id: projectId,
      project_name: "Shop",
      status: "failed",
      url: null,
    });
    expect(typeof envelope.payload.error_message).toBe("string");
    expect(typeof envelope.payload.finished_at).toBe("string");

    const [record] = await deliveriesOf(service, projectId, webhookId);
    expect(record).toMatchObject({
      id: sent.body.delivery_id,
      event_type: "deployment.failed",
      success: true,
    });
    expect(record?.payload).toBe(request?.body);
  });

  it("defaults to deployment.succeeded and refuses event types that are never emitted", async () => {
    const webhookId = await newWebhook({
      url: `${receiver.url}/test-default`,
      events: ["deployment.created"],
    });
    const sent = await service.api("POST", `/projects/${projectId}/webhooks/${webhookId}/test`, { body: {} });
    expect(sent.status).toBe(200);
    const request = receiver.requests.find((r) => r.path === "/test-default");
    expect(request?.headers["x-webhook-event"]).toBe("deployment.succeeded");
    const payload = JSON.parse(request?.body ?? "{}").payload;
    expect(payload).toMatchObject({ status: "succeeded", error_message: null, deployment_id: 0 });
    expect(typeof payload.url).toBe("string");

    const refused = await service.api("POST", `/projects/${projectId}/webhooks/${webhookId}/test`, {
      body: { event_type: "email.bounced" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("deployment.succeeded");
  });
});

describe("leases and workers", () => {
  it("claims again a delivery whose worker died (lease expired)", async () => {
    const webhookId = await newWebhook({ url: `${receiver.url}/orphan`, events: ["deployment.created"] });
    const emitted = await withTransaction(service.pool, async (client) => {
      // Disable the webhook's queueing path: insert the event and a delivery leased to a dead worker.
      const result = await emitEvent(client, { eventType: "deployment.created", projectId, payload: {} });
      await client.query(
        `UPDATE deliveries SET state = 'in_flight', locked_by = 'dead-worker', locked_until = now() - interval '1 second'
          WHERE event_id = $1`,
        [result.envelope.id],
      );
      return result;
    });
    const [record] = await waitForDeliveries(webhookId, 1);
    expect(record).toMatchObject({ event_id: emitted.envelope.id, success: true, attempt_number: 1 });
  });

  it("keeps delivering to other receivers while one receiver hangs", async () => {
    // The stuck receiver's sends stay open for the whole test (a long timeout): the healthy
    // receiver must get everything while they do, whatever the machine's speed.
    const slow = await startTestService({
      DELIVERY_CONCURRENCY: "8",
      DELIVERY_PER_WEBHOOK_CONCURRENCY: "2",
      DELIVERY_TIMEOUT_MS: "120000",
      DELIVERY_LEASE_MS: "140000",
      // Closing must not wait for the sends that hang (they go back to the queue).
      SHUTDOWN_TIMEOUT_MS: "200",
    });
    try {
      const project = await createProject(slow, "p", "P");
      receiver.on("/stuck", () => {});
      const make = async (path: string) =>
        (
          await createWebhook(slow, project, {
            url: `${receiver.url}${path}`,
            events: ["deployment.created"],
          })
        ).id;
      const stuck = await make("/stuck");
      const healthy = await make("/healthy");
      await withTransaction(slow.pool, async (client) => {
        for (let i = 0; i < 20; i++)
          await emitEvent(client, { eventType: "deployment.created", projectId: project, payload: {} });
      });
      await waitUntil(
        "rows[0].n === 20",
        async () => {
          const { rows } = await slow.pool.query(
            "SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND state = 'done' AND success",
            [healthy],
          );
          return rows[0].n === 20 ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const { rows } = await slow.pool.query(
        "SELECT state, count(*)::int AS n FROM deliveries WHERE webhook_id = $1 GROUP BY state ORDER BY state",
        [stuck],
      );
      expect(rows).toEqual([
        { state: "in_flight", n: 2 },
        { state: "queued", n: 18 },
      ]);
    } finally {
      await slow.close();
    }
  });
  it("does not let a few hanging receivers take every slot: each new one gets two, and a healthy one the rest", async () => {
    // Four receivers that never answer, with the oldest rows in the queue: before receiver limits
    // they took all sixteen slots (per-webhook cap 16) and the healthy receiver waited for the timeout.
    const service16 = await startTestService({
      DELIVERY_CONCURRENCY: "16",
      DELIVERY_TIMEOUT_MS: "120000",
      DELIVERY_LEASE_MS: "140000",
      SHUTDOWN_TIMEOUT_MS: "200",
    });
    try {
      const project = await createProject(service16, "r", "R");
      receiver.on("/hangs-too", () => {});
      const make = async (path: string, events: string[]) =>
        (await createWebhook(service16, project, { url: `${receiver.url}${path}`, events })).id;
      const hanging: number[] = [];
      for (let i = 0; i < 4; i++) hanging.push(await make("/hangs-too", ["deployment.created"]));
      const healthy = await make("/healthy-too", ["deployment.succeeded"]);
      await withTransaction(service16.pool, async (client) => {
        for (let i = 0; i < 10; i++)
          await emitEvent(client, { eventType: "deployment.created", projectId: project, payload: {} });
        for (let i = 0; i < 20; i++)
          await emitEvent(client, { eventType: "deployment.succeeded", projectId: project, payload: {} });
      });
      await waitUntil(
        "rows[0].n === 20",
        async () => {
          const { rows } = await service16.pool.query(
            "SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND success",
            [healthy],
          );
          return rows[0].n === 20 ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const { rows } = await service16.pool.query(
        `SELECT webhook_id, count(*)::int AS n FROM deliveries
          WHERE webhook_id = ANY($1) AND state = 'in_flight' GROUP BY webhook_id ORDER BY webhook_id`,
        [hanging],
      );
      expect(rows).toEqual(hanging.map((webhook_id) => ({ webhook_id, n: 2 })));
    } finally {
      await service16.close();
    }
  });

  it("keeps refilling the one free slot at once while every other slot hangs", async () => {
    // 15 of 16 slots hang (15 receivers, one send each: a webhook's own limit would not let one
    // receiver hold them all): the worker gathers finished sends for a turn only briefly, never until
    // the hanging ones end.
    const busy = await startTestService({
      DELIVERY_CONCURRENCY: "16",
      DELIVERY_PER_WEBHOOK_CONCURRENCY: "15",
      DELIVERY_TIMEOUT_MS: "120000",
      DELIVERY_LEASE_MS: "140000",
      // Closing must not wait for the sends that hang (they go back to the queue).
      SHUTDOWN_TIMEOUT_MS: "200",
    });
    try {
      const project = await createProject(busy, "q", "Q");
      receiver.on("/hangs", () => {});
      const make = async (path: string, events: string[]) =>
        (await createWebhook(busy, project, { url: `${receiver.url}${path}`, events })).id;
      const hanging: number[] = [];
      for (let i = 0; i < 15; i++) hanging.push(await make("/hangs", ["deployment.created"]));
      const healthy = await make("/one-slot", ["deployment.succeeded"]);
      const count = (webhookIds: number[], where: string) =>
        busy.pool
          .query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ANY($1) AND ${where}`, [
            webhookIds,
          ])
          .then(({ rows }) => rows[0].n as number);
      await withTransaction(busy.pool, (client) =>
        emitEvent(client, { eventType: "deployment.created", projectId: project, payload: {} }),
      );
      await waitUntil("(await count(hanging, \"state = 'in_flight'\")) === 15", async () =>
        (await count(hanging, "state = 'in_flight'")) === 15 ? true : undefined,
      );

      for (let i = 1; i <= 20; i++) {
        await withTransaction(busy.pool, (client) =>
          emitEvent(client, { eventType: "deployment.succeeded", projectId: project, payload: {} }),
        );
        await waitUntil(
          '(await count([healthy], "success")) === i',
          async () => ((await count([healthy], "success")) === i ? true : undefined),
          { timeoutMs: 30_000 },
        );
      }
      // All twenty went through the one free slot while the fifteen hanging sends stayed open.
      expect(await count(hanging, "state = 'in_flight'")).toBe(15);
    } finally {
      await busy.close();
    }
  });
});

describe("claiming ahead", () => {
  /**
   * A service with 4 slots and one webhook whose receiver answers its first 8 requests at once (its
   * limit grows to 4) and holds every later one until release(); 30 events emitted.
   */
  async function hangAfterEight(leaseMs: number) {
    const ahead = await startTestService({
      DELIVERY_CONCURRENCY: "4",
      DELIVERY_PER_WEBHOOK_CONCURRENCY: "4",
      DELIVERY_TIMEOUT_MS: "120000",
      DELIVERY_LEASE_MS: String(leaseMs),
      DELIVERY_POLL_INTERVAL_MS: "100",
      SHUTDOWN_TIMEOUT_MS: "200",
    });
    const path = `/ahead-${leaseMs}`;
    const held: Array<() => void> = [];
    let open = 0;
    let mostOpen = 0;
    let answered = 0;
    let holding = true;
    receiver.on(path, (_request, res) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      const answer = () => {
        open -= 1;
        res.writeHead(200).end("ok");
      };
      answered += 1;
      if (answered <= 8 || !holding) answer();
      else held.push(answer);
    });
    const project = await createProject(ahead, "a", "A");
    const webhook = (
      await createWebhook(ahead, project, { url: `${receiver.url}${path}`, events: ["deployment.created"] })
    ).id;
    await withTransaction(ahead.pool, (client) =>
      emitEvents(
        client,
        Array.from({ length: 30 }, () => ({
          eventType: "deployment.created" as const,
          projectId: project,
          payload: {},
        })),
      ),
    );
    const requests = () => receiver.requests.filter((request) => request.path === path).length;
    const states = async () => {
      const { rows } = await ahead.pool.query(
        "SELECT state, count(*)::int AS n FROM deliveries WHERE webhook_id = $1 GROUP BY state",
        [webhook],
      );
      return Object.fromEntries(rows.map((row) => [row.state, row.n])) as Record<string, number>;
    };
    const releaseAll = async () => {
      holding = false;
      for (const answer of held.splice(0)) answer();
      await waitUntil(
        "(await states()).done === 30",
        async () => ((await states()).done === 30 ? true : undefined),
        { timeoutMs: 30_000 },
      );
    };
    await waitUntil("requests() === 12 && held.length === 4", async () =>
      requests() === 12 && held.length === 4 ? true : undefined,
    );
    return { service: ahead, states, requests, releaseAll, mostOpen: () => mostOpen };
  }

  it("holds rows ahead of its free slots while sends finish, and never sends more than the slots at once", async () => {
    const { service: ahead, states, requests, releaseAll, mostOpen } = await hangAfterEight(200_000);
    try {
      // Four sends open (every slot) and two rows claimed ahead (half the slots), waiting unsent.
      await waitUntil("(await states()).in_flight === 6", async () =>
        (await states()).in_flight === 6 ? true : undefined,
      );
      expect(requests()).toBe(12);
      await releaseAll();
      expect(requests()).toBe(30);
      expect(mostOpen()).toBe(4);
    } finally {
      await ahead.close();
    }
  });

  it("gives rows back to the queue unsent once they waited as long as their lease allows", async () => {
    // A lease 1 s longer than the longest send (120 s timeout + 10 s connect + 1 s): a row may wait 1 s.
    const { service: ahead, states, requests, releaseAll } = await hangAfterEight(132_000);
    try {
      await waitUntil("now.in_flight === 4 && now.queued === 18", async () => {
        const now = await states();
        return now.in_flight === 4 && now.queued === 18 ? true : undefined;
      });
      expect(requests()).toBe(12);
      await releaseAll();
      expect(requests()).toBe(30);
    } finally {
      await ahead.close();
    }
  });
});

describe("metrics", () => {
  it("counts deliveries by outcome, event type and webhook, without URLs or secrets", async () => {
    const webhookId = await newWebhook({
      url: `${receiver.url}/metered`,
      events: ["deployment.succeeded"],
      secret: "metrics-secret-value",
    });
    await emit(service.pool, projectId, "deployment.succeeded");
    await emit(service.pool, projectId, "deployment.succeeded");
    await waitForDeliveries(webhookId, 2);
    const response = await fetch(`${service.baseUrl}/metrics`, {
      headers: { authorization: "Bearer delivery-engine-metrics" },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(
      `webhook_operator_deliveries_total{webhook_id="${webhookId}",event_type="deployment.succeeded",outcome="success",reason="none"} 2`,
    );
    expect(text).toMatch(/webhook_operator_delivery_duration_seconds_count\{outcome="success"\} \d+/);
    expect(text).toMatch(/webhook_operator_delivery_lag_seconds_count \d+/);
    expect(text).toMatch(/webhook_operator_delivery_queue_depth \d+/);
    expect(text).toMatch(/webhook_operator_deliveries_in_flight \d+/);
    expect(text).toMatch(/webhook_operator_delivery_replays_total\{outcome="success"\} \d+/);
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).not.toContain(receiver.url);
    expect(text).not.toContain("metrics-secret-value");
  });
});
