import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { testSecretBox } from "../support/secret-keys.js";
import type { ApiCallOptions, ApiResponse } from "../support/service.js";
import { startTestService, type TestService } from "../support/service.js";

// Every event name of spec §6 (6.1 emitted, 6.2 accepted but never emitted).
const specEventNames = [
  "deployment.created",
  "deployment.succeeded",
  "deployment.failed",
  "deployment.cancelled",
  "deployment.ready",
  "project.created",
  "project.deleted",
  "domain.created",
  "domain.provisioned",
  "email.delivered",
  "email.bounced",
  "email.complained",
];

let service: TestService;
let projectA: number;
let projectB: number;

async function webhookCount(): Promise<number> {
  const { rows } = await service.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks");
  return rows[0]?.n ?? -1;
}

async function webhookRow(id: number): Promise<Record<string, unknown> | undefined> {
  const { rows } = await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [id]);
  return rows[0];
}

/** The webhook's secret as stored, opened with the test key (it is stored encrypted). */
async function storedSecret(id: number): Promise<string | null> {
  const secret = (await webhookRow(id))?.secret as string | null | undefined;
  return secret ? testSecretBox().open(secret) : (secret ?? null);
}

function expectErrorShape(response: ApiResponse, status: number, code?: string) {
  expect(response.status).toBe(status);
  expect(Object.keys(response.body)).toEqual(["error"]);
  expect(response.body.error).toEqual(
    expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
  );
  for (const key of Object.keys(response.body.error)) expect(["code", "message", "details"]).toContain(key);
  expect(response.body.error.message.length).toBeGreaterThan(0);
  if (code) expect(response.body.error.code).toBe(code);
}

/** Sends a request that must be rejected, and checks nothing was written to webhooks. */
async function expectRejected(
  method: string,
  path: string,
  options: ApiCallOptions,
  status: number,
  code?: string,
): Promise<ApiResponse> {
  const before = await webhookCount();
  const response = await service.api(method, path, options);
  expectErrorShape(response, status, code);
  expect(await webhookCount()).toBe(before);
  return response;
}

const valid = { url: "https://example.com/hook", events: ["deployment.succeeded"] };

/** A valid webhook of the project, with `body`'s fields; as the API answered it. */
const validWebhook = (projectId: number, body: Record<string, unknown> = {}) =>
  createWebhook(service, projectId, { ...valid, ...body });

beforeAll(async () => {
  service = await startTestService();
  projectA = await createProject(service, "a", "A");
  projectB = await createProject(service, "b", "B");
});
afterAll(() => service.close());

describe("POST /projects/{project_id}/webhooks: invalid input", () => {
  const path = () => `/projects/${projectA}/webhooks`;

  it.each([
    ["missing url", { events: ["deployment.succeeded"] }, /body\.url: url is required/],
    ["empty url", { ...valid, url: "" }, /body\.url: url is required$/],
    ["missing events", { url: "https://example.com/hook" }, /events/],
    ["empty events array", { ...valid, events: [] }, /events must name at least one event type/],
    ["ftp:// url", { ...valid, url: "ftp://example.com/hook" }, /absolute http/],
    ["relative url", { ...valid, url: "/hook" }, /absolute http/],
    ["url without scheme", { ...valid, url: "example.com/hook" }, /absolute http/],
    ["url over 2048 characters", { ...valid, url: `https://example.com/${"a".repeat(2048)}` }, /2048/],
    // Never sent to the receiver, so the URL would not name what is used (rcv.example below).
    [
      "url with a fragment",
      { ...valid, url: "http://rcv.example#@127.0.0.1:31101/" },
      /must not have a fragment/,
    ],
    [
      "url with an empty fragment",
      { ...valid, url: "https://example.com/hook#" },
      /must not have a fragment/,
    ],
    ["url is a number", { ...valid, url: 42 }, /url must be a string/],
    ["events is a string", { ...valid, events: "deployment.succeeded" }, /events/],
    ["events holds a number", { ...valid, events: [1] }, /events/],
    ["enabled is a string", { ...valid, enabled: "yes" }, /enabled must be a boolean/],
    ["unknown field", { ...valid, name: "extra" }, /name/],
    ["empty secret", { ...valid, secret: "" }, /secret must not be empty/],
    ["secret is a number", { ...valid, secret: 12345 }, /secret/],
    ["body is an array", [valid], /body/],
    ["body is null", null, /body/],
  ])("rejects %s with 400", async (_name, body, message) => {
    const response = await expectRejected("POST", path(), { body }, 400);
    expect(response.body.error.message).toMatch(message);
  });

  it("rejects an unknown event name and lists every valid event type", async () => {
    const response = await expectRejected(
      "POST",
      path(),
      { body: { ...valid, events: ["deployment.succeeded", "deployment.exploded"] } },
      400,
      "validation_failed",
    );
    expect(response.body.error.message).toContain("deployment.exploded");
    for (const name of specEventNames) expect(response.body.error.message).toContain(name);
  });

  it("rejects the underscore spelling of an event name", async () => {
    await expectRejected(
      "POST",
      path(),
      { body: { ...valid, events: ["deployment_succeeded"] } },
      400,
      "validation_failed",
    );
  });

  it("rejects malformed JSON with code bad_request", async () => {
    const response = await expectRejected(
      "POST",
      path(),
      { rawBody: '{"url": "https://example.com/hook", "events": [', contentType: "application/json" },
      400,
      "bad_request",
    );
    expect(response.body.error.message).toMatch(/malformed JSON/i);
  });

  it("rejects a text/plain body", async () => {
    await expectRejected(
      "POST",
      path(),
      { rawBody: JSON.stringify(valid), contentType: "text/plain" },
      400,
      "bad_request",
    );
  });

  it("rejects a request without a body", async () => {
    await expectRejected("POST", path(), {}, 400);
  });

  it("rejects a body over 64kb with 413 payload_too_large", async () => {
    const body = JSON.stringify({ ...valid, padding: "x".repeat(70 * 1024) });
    expect(body.length).toBeGreaterThan(64 * 1024);
    await expectRejected("POST", path(), { rawBody: body }, 413, "payload_too_large");
  });

  it("rejects a non-numeric project_id with 400", async () => {
    const response = await expectRejected("POST", "/projects/abc/webhooks", { body: valid }, 400);
    expect(response.body.error.message).toMatch(/project_id/);
    await expectRejected("POST", "/projects/0/webhooks", { body: valid }, 400);
    await expectRejected("POST", "/projects/1.5/webhooks", { body: valid }, 400);
  });

  it("answers 404 for an unknown project", async () => {
    await expectRejected("POST", "/projects/987654/webhooks", { body: valid }, 404, "not_found");
  });
});

describe("POST /projects/{project_id}/webhooks: accepted input", () => {
  it("defaults enabled to true and has_secret to false", async () => {
    const body = await validWebhook(projectA);
    expect(body).toMatchObject({ enabled: true, has_secret: false, events: ["deployment.succeeded"] });
    const row = await webhookRow(body.id);
    expect(row).toMatchObject({ enabled: true, secret: null, project_id: projectA, owner: null });
  });

  it("accepts enabled false", async () => {
    const body = await validWebhook(projectA, { enabled: false });
    expect(body.enabled).toBe(false);
    expect((await webhookRow(body.id))?.enabled).toBe(false);
  });

  it("reports has_secret true when a secret is given", async () => {
    const body = await validWebhook(projectA, { secret: "a-secret" });
    expect(body.has_secret).toBe(true);
    expect(await storedSecret(body.id)).toBe("a-secret");
  });

  it("deduplicates repeated event names", async () => {
    const body = await validWebhook(projectA, {
      events: ["deployment.failed", "deployment.succeeded", "deployment.failed", "deployment.succeeded"],
    });
    expect(body.events).toEqual(["deployment.failed", "deployment.succeeded"]);
    expect((await webhookRow(body.id))?.events).toEqual(["deployment.failed", "deployment.succeeded"]);
  });

  it("accepts a url of exactly 2048 characters and http://", async () => {
    const url = `http://example.com/${"a".repeat(2048 - "http://example.com/".length)}`;
    expect(url.length).toBe(2048);
    const body = await validWebhook(projectA, { url });
    expect(body.url).toBe(url);
  });
});

describe("PUT /projects/{project_id}/webhooks/{webhook_id}", () => {
  it("accepts {} and moves updated_at strictly forward, keeping every other field", async () => {
    const created = await validWebhook(projectA, { secret: "keep-me", enabled: false });
    const rowBefore = await webhookRow(created.id);
    const updated = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, { body: {} });
    expect(updated.status).toBe(200);
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
    const { updated_at: _a, ...rest } = updated.body;
    const { updated_at: _b, ...restBefore } = created;
    expect(rest).toEqual(restBefore);
    const rowAfter = await webhookRow(created.id);
    expect({ ...rowAfter, updated_at: null }).toEqual({ ...rowBefore, updated_at: null });
  });

  it("keeps omitted fields and changes only the supplied ones", async () => {
    const created = await validWebhook(projectA, {
      url: "https://example.com/one",
      events: ["deployment.created", "deployment.ready"],
      secret: "s1",
    });
    const url = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { url: "https://example.com/two" },
    });
    expect(url.status).toBe(200);
    expect(url.body).toMatchObject({
      url: "https://example.com/two",
      events: ["deployment.created", "deployment.ready"],
      enabled: true,
      has_secret: true,
    });
    expect(await webhookRow(created.id)).toMatchObject({ url: "https://example.com/two" });
    expect(await storedSecret(created.id)).toBe("s1");

    const events = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { events: ["email.bounced", "email.bounced"] },
    });
    expect(events.status).toBe(200);
    expect(events.body).toMatchObject({ url: "https://example.com/two", events: ["email.bounced"] });
    expect((await webhookRow(created.id))?.events).toEqual(["email.bounced"]);

    const disabled = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { enabled: false },
    });
    expect(disabled.body).toMatchObject({ enabled: false, events: ["email.bounced"], has_secret: true });
    const read = await service.api("GET", `/projects/${projectA}/webhooks/${created.id}`);
    expect(read.body).toEqual(disabled.body);
  });

  it("replaces the secret when one is supplied and removes it with null", async () => {
    const created = await validWebhook(projectA, { secret: "old-secret" });
    expect(await storedSecret(created.id)).toBe("old-secret");

    const replaced = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { secret: "new-secret" },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.has_secret).toBe(true);
    expect(await storedSecret(created.id)).toBe("new-secret");

    const removed = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { secret: null },
    });
    expect(removed.status).toBe(200);
    expect(removed.body.has_secret).toBe(false);
    expect((await webhookRow(created.id))?.secret).toBeNull();

    const added = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      body: { secret: "third" },
    });
    expect(added.body.has_secret).toBe(true);
    expect(await storedSecret(created.id)).toBe("third");
  });

  it("moves updated_at strictly forward across 5 rapid consecutive updates", async () => {
    const created = await validWebhook(projectA);
    let previous = Date.parse(created.updated_at);
    for (let i = 0; i < 5; i++) {
      const response = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
        body: { enabled: i % 2 === 0 },
      });
      expect(response.status).toBe(200);
      expect(response.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const current = Date.parse(response.body.updated_at);
      expect(current).toBeGreaterThan(previous);
      previous = current;
    }
    expect(Date.parse(created.created_at)).toBeLessThan(previous);
  });

  it.each([
    ["ftp:// url", { url: "ftp://example.com/x" }],
    ["relative url", { url: "/x" }],
    ["url over 2048 characters", { url: `https://example.com/${"a".repeat(2048)}` }],
    ["url with a fragment", { url: "https://example.com/hook#part" }],
    ["url is a number", { url: 1 }],
    ["url is null", { url: null }],
    ["empty events", { events: [] }],
    ["unknown event", { events: ["deployment.exploded"] }],
    ["events is a string", { events: "deployment.failed" }],
    // events: null is taken as left out (test/integration/openapi-generators.test.ts).
    ["enabled is a string", { enabled: "yes" }],
    ["enabled is null", { enabled: null }],
    ["empty secret", { secret: "" }],
    ["unknown field", { enabled: false, owner: "someone/else" }],
    ["body is an array", []],
  ])("rejects %s with 400 and leaves the row unchanged", async (_name, body) => {
    const created = await validWebhook(projectA, { secret: "unchanged" });
    const before = await webhookRow(created.id);
    const response = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, { body });
    expectErrorShape(response, 400);
    expect(await webhookRow(created.id)).toEqual(before);
  });

  it.each([
    ["malformed JSON", { rawBody: "{not json", contentType: "application/json" }, 400, "bad_request"],
    ["text/plain body", { rawBody: "{}", contentType: "text/plain" }, 400, "bad_request"],
    ["body over 64kb", { rawBody: JSON.stringify({ url: `https://e.com/${"a".repeat(70_000)}` }) }, 413],
  ] as const)("rejects %s and leaves the row unchanged", async (_name, options, status, code?: string) => {
    const created = await validWebhook(projectA);
    const before = await webhookRow(created.id);
    const response = await service.api("PUT", `/projects/${projectA}/webhooks/${created.id}`, {
      ...options,
    });
    expectErrorShape(response, status, code);
    expect(await webhookRow(created.id)).toEqual(before);
  });

  it("answers 404 for an unknown webhook id and 400 for a non-numeric one", async () => {
    await expectRejected("PUT", `/projects/${projectA}/webhooks/987654`, { body: {} }, 404, "not_found");
    await expectRejected("PUT", `/projects/${projectA}/webhooks/abc`, { body: {} }, 400);
  });
});

describe("webhooks addressed under another project", () => {
  it("answers 404 for GET, PUT and DELETE and leaves the row in place", async () => {
    const created = await validWebhook(projectA, { secret: "x" });
    const before = await webhookRow(created.id);
    const path = `/projects/${projectB}/webhooks/${created.id}`;
    expectErrorShape(await service.api("GET", path), 404, "not_found");
    expectErrorShape(await service.api("PUT", path, { body: { enabled: false } }), 404, "not_found");
    expectErrorShape(await service.api("DELETE", path), 404, "not_found");
    expect(await webhookRow(created.id)).toEqual(before);
    const list = await service.api("GET", `/projects/${projectB}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.body.map((w: { id: number }) => w.id)).not.toContain(created.id);
  });
});

describe("webhooks owned by a Kubernetes resource", () => {
  it("refuses PUT and DELETE with 409 naming the resource; GET still works", async () => {
    const created = await validWebhook(projectA);
    await service.pool.query("UPDATE webhooks SET owner = 'team-a/deploy-hook' WHERE id = $1", [created.id]);
    const before = await webhookRow(created.id);
    const path = `/projects/${projectA}/webhooks/${created.id}`;

    const put = await service.api("PUT", path, { body: { enabled: false } });
    expectErrorShape(put, 409, "conflict");
    expect(put.body.error.message).toContain("team-a/deploy-hook");

    const removed = await service.api("DELETE", path);
    expectErrorShape(removed, 409, "conflict");
    expect(removed.body.error.message).toContain("team-a/deploy-hook");

    expect(await webhookRow(created.id)).toEqual(before);
    const read = await service.api("GET", path);
    expect(read.status).toBe(200);
    // Unchanged but for managed_by, which now names the resource; the owner column itself stays private.
    expect(read.body).toEqual({
      ...created,
      managed_by: { kind: "Webhook", namespace: "team-a", name: "deploy-hook" },
    });
    expect(read.text).not.toContain("owner");
  });
});

describe("GET /webhook-event-types (endpoint 1)", () => {
  it("lists the 12 event types of spec §6 as {event_type, description, category}", async () => {
    const response = await service.api("GET", "/webhook-event-types");
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    expect(response.body).toHaveLength(12);
    for (const item of response.body) {
      expect(Object.keys(item).sort()).toEqual(["category", "description", "event_type"]);
      expect(typeof item.event_type).toBe("string");
      expect(typeof item.category).toBe("string");
      expect(item.description.length).toBeGreaterThan(0);
    }
    const names = response.body.map((item: { event_type: string }) => item.event_type);
    expect([...names].sort()).toEqual([...specEventNames].sort());
    const deployment = response.body.filter((item: { category: string }) => item.category === "Deployment");
    expect(deployment.map((item: { event_type: string }) => item.event_type).sort()).toEqual(
      specEventNames.filter((name) => name.startsWith("deployment.")).sort(),
    );
  });

  it("accepts a subscription to names that are never emitted", async () => {
    const body = await validWebhook(projectA, { events: ["email.bounced", "project.created"] });
    expect(body.events).toEqual(["email.bounced", "project.created"]);
    const all = await validWebhook(projectA, { events: specEventNames });
    expect(all.events).toEqual(specEventNames);
  });
});
