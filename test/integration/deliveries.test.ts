import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { type ApiResponse, startTestService, type TestService } from "../support/service.js";
import { deliveryFields as specDeliveryFields } from "../support/spec-fields.js";

// Endpoints 7 and 8 (spec §2.6, §4 rule 5, §8): delivery records are finished attempts only
// (deliveries.state = 'done'), newest first, `limit` default 50 and clamped to 1–100.

const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const deliveryFields = [...specDeliveryFields].sort();
const base = Date.parse("2026-03-01T10:00:00.000Z");
const at = (seconds: number, millis = 0) => new Date(base + seconds * 1000 + millis).toISOString();

// Receivers that nothing listens on: should a delivery worker ever pick up a seeded queued row, it
// must not reach the outside world.
const receiver = (name: string) => `http://127.0.0.1:9/${name}`;

let service: TestService;

interface SeedEvent {
  id: string;
  projectId: number;
  eventType: string;
  envelope: string;
}

interface SeedDelivery {
  webhookId: number;
  event: SeedEvent;
  attempt?: number;
  state?: "queued" | "in_flight" | "done";
  success?: boolean | null;
  statusCode?: number | null;
  responseBody?: string | null;
  errorMessage?: string | null;
  createdAt: string;
  deliveredAt?: string | null;
}

interface Seeded extends SeedDelivery {
  id: number;
}

function makeEvent(projectId: number, eventType = "deployment.succeeded", envelope?: string): SeedEvent {
  const id = randomUUID();
  return {
    id,
    projectId,
    eventType,
    envelope:
      envelope ??
      JSON.stringify({
        id,
        event_type: eventType,
        timestamp: "2026-03-01T10:00:00.000Z",
        project_id: projectId,
        payload: { deployment_id: 1, project_id: projectId, project_name: "Shop", status: "succeeded" },
      }),
  };
}

/** Inserts the events and deliveries with one multi-row statement each; returns rows with their ids. */
async function seed(deliveries: SeedDelivery[]): Promise<Seeded[]> {
  const events = [...new Map(deliveries.map((d) => [d.event.id, d.event])).values()];
  await service.pool.query(
    `INSERT INTO events (id, project_id, event_type, envelope)
     SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[])`,
    [
      events.map((e) => e.id),
      events.map((e) => e.projectId),
      events.map((e) => e.eventType),
      events.map((e) => e.envelope),
    ],
  );
  const rows = deliveries.map((d) => {
    const state = d.state ?? "done";
    const done = state === "done";
    return {
      webhookId: d.webhookId,
      eventId: d.event.id,
      eventType: d.event.eventType,
      attempt: d.attempt ?? 1,
      state,
      success: d.success === undefined ? (done ? true : null) : d.success,
      statusCode: d.statusCode === undefined ? (done ? 200 : null) : d.statusCode,
      responseBody: d.responseBody === undefined ? (done ? "ok" : null) : d.responseBody,
      errorMessage: d.errorMessage ?? null,
      createdAt: d.createdAt,
      deliveredAt: d.deliveredAt === undefined ? (done ? d.createdAt : null) : d.deliveredAt,
      lockedBy: state === "in_flight" ? "another-worker" : null,
      lockedUntil: state === "in_flight" ? "2999-01-01T00:00:00Z" : null,
    };
  });
  const { rows: inserted } = await service.pool.query<{
    id: number;
    webhook_id: number;
    event_id: string;
    attempt_number: number;
  }>(
    `INSERT INTO deliveries (webhook_id, event_id, event_type, attempt_number, state, success, status_code,
                             response_body, error_message, created_at, delivered_at, locked_by, locked_until)
     SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::boolean[], $7::int[],
                          $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[], $12::text[],
                          $13::timestamptz[])
     RETURNING id, webhook_id, event_id, attempt_number`,
    [
      rows.map((r) => r.webhookId),
      rows.map((r) => r.eventId),
      rows.map((r) => r.eventType),
      rows.map((r) => r.attempt),
      rows.map((r) => r.state),
      rows.map((r) => r.success),
      rows.map((r) => r.statusCode),
      rows.map((r) => r.responseBody),
      rows.map((r) => r.errorMessage),
      rows.map((r) => r.createdAt),
      rows.map((r) => r.deliveredAt),
      rows.map((r) => r.lockedBy),
      rows.map((r) => r.lockedUntil),
    ],
  );
  const idOf = new Map(inserted.map((r) => [`${r.webhook_id}/${r.event_id}/${r.attempt_number}`, r.id]));
  return deliveries.map((d) => {
    const id = idOf.get(`${d.webhookId}/${d.event.id}/${d.attempt ?? 1}`);
    if (id === undefined) throw new Error("seeded delivery not returned");
    return { ...d, id };
  });
}

/** Newest first, id desc among equal created_at: computed here, independently of the SQL. */
function newestFirst(rows: Seeded[]): number[] {
  return [...rows]
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id - a.id)
    .map((row) => row.id);
}

/** A webhook of the project named by its receiver path; its id. */
const webhookNamed = async (projectId: number, name: string) =>
  (
    await createWebhook(service, projectId, {
      url: receiver(name),
      events: ["deployment.succeeded", "deployment.failed"],
    })
  ).id;

function expectNotFound(response: ApiResponse): void {
  expect(response.status).toBe(404);
  expect(Object.keys(response.body)).toEqual(["error"]);
  expect(response.body.error.code).toBe("not_found");
  expect(typeof response.body.error.message).toBe("string");
}

function expectValidationError(response: ApiResponse, path: string): void {
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe("validation_failed");
  expect(typeof response.body.error.message).toBe("string");
  expect(response.body.error.message).toContain(path);
}

const ids = (response: ApiResponse) => (response.body as { id: number }[]).map((item) => item.id);

let projectP: number;
let projectQ: number;
/** 120 finished deliveries with scrambled created_at, plus newer queued and in-flight rows. */
let webhookMany: number;
/** A handful of hand-checked records: success, failure, its replay, a queued row. */
let webhookDetail: number;
/** Finished deliveries that all share one created_at. */
let webhookTies: number;
/** A webhook of another project. */
let webhookOther: number;

let manyDone: Seeded[];
let manyExpected: number[];
let manyUnfinished: Seeded[];
let success: Seeded;
let failure: Seeded;
let replay: Seeded;
let detailQueued: Seeded;
let otherDelivery: Seeded;

// A payload whose text would not survive a parse/stringify round trip unchanged: unusual spacing,
// key order, escapes and non-ASCII characters. The API must return it byte for byte.
function oddEnvelope(id: string, projectId: number): string {
  return (
    `{ "timestamp":"2026-03-01T10:00:00.000Z",  "id": "${id}", "event_type" :"deployment.succeeded",` +
    `"project_id":${projectId},"payload":{"project_name":"Caf\\u00e9 ✓ \u00fcber","commit_message":"line1\\nline2",` +
    `"amount":1.50,"url":"https:\\/\\/shop.example.com"} }`
  );
}

beforeAll(async () => {
  service = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "3600000" });
  projectP = await createProject(service, "shop", "Shop");
  projectQ = await createProject(service, "blog", "Blog");
  webhookMany = await webhookNamed(projectP, "many");
  webhookDetail = await webhookNamed(projectP, "detail");
  webhookTies = await webhookNamed(projectP, "ties");
  webhookOther = await webhookNamed(projectQ, "other");

  // 120 finished attempts; created_at is a permutation of seconds so it disagrees with id order.
  manyDone = await seed(
    Array.from({ length: 120 }, (_, i) => ({
      webhookId: webhookMany,
      event: makeEvent(projectP),
      createdAt: at((i * 37) % 120),
    })),
  );
  manyExpected = newestFirst(manyDone);
  // Unfinished rows newer than every finished one: if they were listed they would come first.
  manyUnfinished = await seed([
    { webhookId: webhookMany, event: makeEvent(projectP), state: "queued", createdAt: at(86_400) },
    { webhookId: webhookMany, event: makeEvent(projectP), state: "queued", createdAt: at(86_401) },
    { webhookId: webhookMany, event: makeEvent(projectP), state: "in_flight", createdAt: at(86_402) },
  ]);

  const successEvent = makeEvent(projectP);
  successEvent.envelope = oddEnvelope(successEvent.id, projectP);
  const failedEvent = makeEvent(projectP, "deployment.failed");
  [success, failure, replay, detailQueued] = (await seed([
    {
      webhookId: webhookDetail,
      event: successEvent,
      statusCode: 204,
      responseBody: "",
      createdAt: at(10),
      deliveredAt: at(10, 250),
    },
    {
      webhookId: webhookDetail,
      event: failedEvent,
      success: false,
      statusCode: 500,
      responseBody: "boom",
      errorMessage: `HTTP 500 error from ${receiver("detail")}: Internal Server Error. The endpoint rejected the request.`,
      createdAt: at(20),
      deliveredAt: at(20, 7),
    },
    {
      webhookId: webhookDetail,
      event: failedEvent,
      attempt: 2,
      statusCode: 200,
      responseBody: '{"ok":true}',
      createdAt: at(30),
      deliveredAt: at(30, 999),
    },
    { webhookId: webhookDetail, event: makeEvent(projectP), state: "queued", createdAt: at(40) },
  ])) as [Seeded, Seeded, Seeded, Seeded];

  [otherDelivery] = (await seed([
    { webhookId: webhookOther, event: makeEvent(projectQ), createdAt: at(5) },
  ])) as [Seeded];
});
afterAll(() => service.close());

describe("GET .../webhooks/{webhook_id}/deliveries (endpoint 7)", () => {
  const list = (query = "", webhookId = webhookMany, projectId = projectP) =>
    service.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries${query}`);

  it("returns a bare array of the newest 50 finished attempts by default", async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    expect(ids(response)).toEqual(manyExpected.slice(0, 50));
    for (const item of response.body) expect(item.webhook_id).toBe(webhookMany);
  });

  it.each([
    ["1", 1],
    ["7", 7],
    ["50", 50],
    ["99", 99],
    ["100", 100],
  ])("returns the newest limit=%s deliveries", async (limit, count) => {
    const response = await list(`?limit=${limit}`);
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(manyExpected.slice(0, count));
  });

  it.each([
    ["0", 1],
    ["-3", 1],
    ["101", 100],
    ["1000", 100],
  ])("clamps limit=%s to %i", async (limit, count) => {
    const response = await list(`?limit=${limit}`);
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(manyExpected.slice(0, count));
  });

  it.each(["1.5", "abc", "NaN", "1e400"])("rejects non-integer limit=%j with 400", async (limit) => {
    expectValidationError(await list(`?limit=${limit}`), "query.limit");
  });

  it("never lists queued or in-flight rows, even when they are the newest", async () => {
    const response = await list("?limit=100");
    const listed = new Set(ids(response));
    for (const row of manyUnfinished) expect(listed.has(row.id)).toBe(false);
    // The rows are still unfinished: the test really looked at queued/in-flight records.
    const { rows } = await service.pool.query<{ state: string }>(
      "SELECT state FROM deliveries WHERE id = ANY($1) ORDER BY id",
      [manyUnfinished.map((row) => row.id)],
    );
    expect(rows.map((row) => row.state)).toEqual(["queued", "queued", "in_flight"]);
  });

  it("lists only this webhook's records: failure, its replay and a success, newest first", async () => {
    const response = await list("", webhookDetail);
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual([replay.id, failure.id, success.id]);
    expect(response.body.map((d: { attempt_number: number }) => d.attempt_number)).toEqual([2, 1, 1]);
    expect(response.body[0].event_id).toBe(response.body[1].event_id);
    expect(ids(await list("", webhookOther, projectQ))).toEqual([otherDelivery.id]);
  });

  it("returns every item with exactly the §2.6 fields and their types", async () => {
    const response = await list("?limit=100");
    const detail = await list("", webhookDetail);
    for (const item of [...response.body, ...detail.body]) {
      expect(Object.keys(item).sort()).toEqual(deliveryFields);
      expect(Number.isInteger(item.id)).toBe(true);
      expect(Number.isInteger(item.webhook_id)).toBe(true);
      expect(item.event_type).toMatch(/^deployment\.[a-z]+$/);
      expect(item.event_id).toMatch(uuid);
      expect(typeof item.payload).toBe("string");
      expect(JSON.parse(item.payload).id).toBe(item.event_id);
      expect(typeof item.success).toBe("boolean");
      expect(Number.isInteger(item.status_code)).toBe(true);
      expect(typeof item.response_body).toBe("string");
      if (item.success) expect(item.error_message).toBeNull();
      else expect(typeof item.error_message).toBe("string");
      expect(Number.isInteger(item.attempt_number)).toBe(true);
      expect(item.attempt_number).toBeGreaterThanOrEqual(1);
      expect(item.created_at).toMatch(isoMillis);
      expect(item.delivered_at).toMatch(isoMillis);
    }
  });

  it("orders records with identical created_at by id desc", async () => {
    const seeded = await seed(
      Array.from({ length: 12 }, () => ({
        webhookId: webhookTies,
        event: makeEvent(projectP),
        createdAt: "2026-01-01T00:00:00.000Z",
      })),
    );
    const descending = seeded.map((row) => row.id).sort((a, b) => b - a);
    expect(ids(await list("", webhookTies))).toEqual(descending);
    expect(ids(await list("?limit=5", webhookTies))).toEqual(descending.slice(0, 5));
  });

  it("answers 404 for an unknown project or webhook, or a webhook of another project", async () => {
    expectNotFound(await list("", webhookMany, 999_999));
    expectNotFound(await list("", 999_999));
    expectNotFound(await list("", webhookOther, projectP));
    expectNotFound(await list("", webhookMany, projectQ));
    const scoped = await service.api("POST", "/api-keys", {
      body: { name: "q-only", project_ids: [projectQ] },
    });
    expectNotFound(
      await service.api("GET", `/projects/${projectP}/webhooks/${webhookMany}/deliveries`, {
        key: scoped.body.key,
      }),
    );
    const own = await service.api("GET", `/projects/${projectQ}/webhooks/${webhookOther}/deliveries`, {
      key: scoped.body.key,
    });
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual([otherDelivery.id]);
  });

  it("answers 400 for a non-numeric webhook id", async () => {
    const response = await service.api("GET", `/projects/${projectP}/webhooks/abc/deliveries`);
    expectValidationError(response, "path.webhook_id");
  });
});

describe("GET .../webhooks/{webhook_id}/deliveries/{delivery_id} (endpoint 8)", () => {
  const get = (deliveryId: number, webhookId = webhookDetail, projectId = projectP) =>
    service.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries/${deliveryId}`);

  it("returns a successful delivery with exactly the stored values and the payload byte for byte", async () => {
    const response = await get(success.id);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(deliveryFields);
    expect(response.body).toEqual({
      id: success.id,
      webhook_id: webhookDetail,
      event_type: "deployment.succeeded",
      event_id: success.event.id,
      payload: success.event.envelope,
      success: true,
      status_code: 204,
      response_body: "",
      error_message: null,
      attempt_number: 1,
      created_at: "2026-03-01T10:00:10.000Z",
      delivered_at: "2026-03-01T10:00:10.250Z",
      // Seeded as a version before migration 009 would have recorded it.
      request_headers: null,
      duration_ms: null,
    });
    // The envelope was deliberately not in canonical form: a re-serialisation would differ.
    expect(JSON.stringify(JSON.parse(response.body.payload))).not.toBe(success.event.envelope);
    const { rows } = await service.pool.query<{ envelope: string }>(
      "SELECT envelope FROM events WHERE id = $1",
      [success.event.id],
    );
    expect(response.body.payload).toBe(rows[0]?.envelope);
  });

  it("returns a failed delivery with its error message, and its replay as a separate record", async () => {
    const failed = await get(failure.id);
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({
      id: failure.id,
      webhook_id: webhookDetail,
      event_type: "deployment.failed",
      event_id: failure.event.id,
      payload: failure.event.envelope,
      success: false,
      status_code: 500,
      response_body: "boom",
      error_message: failure.errorMessage,
      attempt_number: 1,
      created_at: "2026-03-01T10:00:20.000Z",
      delivered_at: "2026-03-01T10:00:20.007Z",
      request_headers: null,
      duration_ms: null,
    });
    const replayed = await get(replay.id);
    expect(replayed.body).toMatchObject({
      event_id: failure.event.id,
      payload: failure.event.envelope,
      success: true,
      status_code: 200,
      response_body: '{"ok":true}',
      error_message: null,
      attempt_number: 2,
      delivered_at: "2026-03-01T10:00:30.999Z",
    });
  });

  it("returns the same object as the list does", async () => {
    const listed = await service.api(
      "GET",
      `/projects/${projectP}/webhooks/${webhookMany}/deliveries?limit=3`,
    );
    for (const item of listed.body) {
      const one = await get(item.id, webhookMany);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(item);
    }
  });

  it("answers 404 for a queued or in-flight attempt", async () => {
    expectNotFound(await get(detailQueued.id));
    for (const row of manyUnfinished) expectNotFound(await get(row.id, webhookMany));
  });

  it("answers 404 for a delivery of another webhook, even in the same project", async () => {
    expectNotFound(await get(success.id, webhookMany));
    expectNotFound(await get(manyDone[0]?.id ?? 0, webhookDetail));
    expectNotFound(await get(otherDelivery.id, webhookDetail));
    expectNotFound(await get(otherDelivery.id, webhookOther, projectP));
    expect((await get(otherDelivery.id, webhookOther, projectQ)).status).toBe(200);
  });

  it("answers 404 for an unknown delivery, webhook or project", async () => {
    expectNotFound(await get(999_999));
    expectNotFound(await get(success.id, 999_999));
    expectNotFound(await get(success.id, webhookDetail, 999_999));
    expectNotFound(await get(success.id, webhookDetail, projectQ));
  });

  it("answers 400 for a delivery id that is not a positive integer", async () => {
    for (const bad of ["abc", "0", "-1", "1.5"]) {
      const response = await service.api(
        "GET",
        `/projects/${projectP}/webhooks/${webhookDetail}/deliveries/${bad}`,
      );
      expectValidationError(response, "path.delivery_id");
    }
  });
});
