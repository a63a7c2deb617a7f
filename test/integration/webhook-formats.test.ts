import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { HTTP } from "cloudevents";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { standardWebhooksSecret } from "../../src/formats/standard-webhooks.js";
import { reencryptSecrets } from "../../src/secrets/reencrypt.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { protocolPython } from "../support/python-venv.js";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.js";
import { type RecipeReceiver, startRecipe } from "../support/recipe-receivers.js";
import { testSecretKey } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";
import { locateCommand, repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";

// The opt-in delivery shapes of a webhook, through the real service and real receivers on loopback:
// the fields as the API takes and shows them, CloudEvents read by the official SDKs (npm and Python),
// Standard Webhooks signatures verified by the official libraries (npm and Python), custom headers that
// arrive and are never shown, replays of the same bytes, and previews equal to what a send sends.

const secret = "formats-test-secret";
const apiKeyValue = "Bearer sk-live-0123456789abcdef";
const payload = {
  deployment_id: 41,
  project_id: 0,
  project_name: "Shop",
  environment: "production",
  status: "succeeded",
};

let service: TestService;
let receiver: Receiver;
let projectId: number;
let python: RecipeReceiver | undefined;
let goReceiver: RecipeReceiver | undefined;
let goBuild: string | undefined;

/** The Go receiver of test/support/go/standard-webhooks (the official Go library), built into a temp dir. */
async function startGoReceiver(): Promise<RecipeReceiver | undefined> {
  if (
    locateCommand("go", ["version"], "https://go.dev/doc/install, or Debian's golang package").path ===
    undefined
  ) {
    return undefined;
  }
  goBuild = await mkdtemp(path.join(tmpdir(), "standard-webhooks-go-"));
  const binary = path.join(goBuild, "receiver");
  await promisify(execFile)("go", ["build", "-o", binary, "."], {
    cwd: path.join(repoRoot, "test", "support", "go", "standard-webhooks"),
    timeout: 300_000,
  });
  return startRecipe(binary, [], standardWebhooksSecret(secret));
}

beforeAll(async () => {
  [service, receiver] = await Promise.all([startTestService(), startReceiver()]);
  projectId = await createProject(service, "shop", "Shop");
  const interpreter = await protocolPython();
  if (interpreter) {
    const script = path.join("test", "support", "python", "protocol_receiver.py");
    python = await startRecipe(interpreter, [script], standardWebhooksSecret(secret));
  }
  goReceiver = await startGoReceiver();
}, 600_000);
afterAll(async () => {
  await python?.stop();
  await goReceiver?.stop();
  if (goBuild) await rm(goBuild, { recursive: true, force: true });
  await Promise.all([service?.close(), receiver?.close()]);
});

const webhooksPath = () => `/projects/${projectId}/webhooks`;

/** Emits an event and waits for the `nth` request (1-based) the receiver gets on `route`. */
async function deliverTo(route: string, nth: number): Promise<ReceivedRequest> {
  const emitted = await emit(service.pool, projectId, "deployment.succeeded", {
    ...payload,
    project_id: projectId,
  });
  expect(emitted.queued).toBeGreaterThan(0);
  return waitUntil(
    "receiver.requests.filter((r) => r.path === route)[nth - 1]",
    async () => receiver.requests.filter((r) => r.path === route)[nth - 1],
  );
}

/** The webhook's newest delivery record, once it is finished. */
function newestRecord(webhookId: number, count = 1) {
  return waitUntil("records.length >= count", async () => {
    const records = await deliveriesOf(service, projectId, webhookId);
    return records.length >= count ? records[0] : undefined;
  });
}

describe("the webhook fields of formats, signatures and headers", () => {
  it("takes each field on create, shows it on read, and never shows header values", async () => {
    const created = await service.api("POST", webhooksPath(), {
      body: {
        url: `${receiver.url}/fields`,
        events: ["deployment.succeeded"],
        secret,
        format: "cloudevents",
        cloudevents_mode: "binary",
        signature_scheme: "standard-webhooks",
        headers: { Authorization: apiKeyValue, "X-Api-Key": "key-value-1" },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      format: "cloudevents",
      cloudevents_mode: "binary",
      template: null,
      template_content_type: "application/json",
      signature_scheme: "standard-webhooks",
      header_names: ["Authorization", "X-Api-Key"],
    });
    expect(created.text).not.toContain("sk-live");
    expect(created.text).not.toContain("key-value-1");
    const read = await service.api("GET", `${webhooksPath()}/${created.body.id}`);
    expect(read.body).toEqual(created.body);

    // Encrypted at rest: the stored column holds neither value.
    const { rows } = await service.pool.query("SELECT headers FROM webhooks WHERE id = $1", [
      created.body.id,
    ]);
    expect(rows[0].headers).toMatch(/^wo1\./);
    expect(rows[0].headers).not.toContain("sk-live");

    const updated = await service.api("PUT", `${webhooksPath()}/${created.body.id}`, {
      body: { format: "envelope", headers: null },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      format: "envelope",
      header_names: [],
      signature_scheme: "standard-webhooks",
    });
  });

  it("moves sealed header values to a new key with the secrets (secrets reencrypt)", async () => {
    const created = await createWebhook(service, projectId, {
      url: `${receiver.url}/rotate`,
      events: ["deployment.failed"],
      headers: { Authorization: apiKeyValue },
    });
    const stored = async () =>
      (await service.pool.query("SELECT headers FROM webhooks WHERE id = $1", [created.id])).rows[0].headers;
    const before = await stored();
    const newKey = randomBytes(32);
    const rotated = new SecretBox([newKey, Buffer.from(testSecretKey, "base64")]);
    expect(await reencryptSecrets(service.pool, rotated, { rotate: true })).toBeGreaterThanOrEqual(1);
    const after = await stored();
    expect(after).not.toBe(before);
    expect(JSON.parse(new SecretBox([newKey]).open(after))).toEqual({ Authorization: apiKeyValue });
    // Put back under the service's key for the tests that follow.
    await reencryptSecrets(service.pool, new SecretBox([Buffer.from(testSecretKey, "base64"), newKey]), {
      rotate: true,
    });
    await service.api("DELETE", `${webhooksPath()}/${created.id}`);
  });

  it("answers 409 to an update whose template does not fit the stored format", async () => {
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/c`,
      events: ["deployment.failed"],
      format: "slack",
    });
    const answer = await service.api("PUT", `${webhooksPath()}/${webhook.id}`, {
      body: { template: "{{ x }}" },
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error.message).toMatch(/format is "slack"/);
    expect((await service.api("GET", `${webhooksPath()}/${webhook.id}`)).body).toEqual(webhook);
  });

  it("defaults every new field to today's envelope", async () => {
    const created = await createWebhook(service, projectId, {
      url: `${receiver.url}/d`,
      events: ["deployment.failed"],
    });
    expect(created).toMatchObject({
      format: "envelope",
      cloudevents_mode: "structured",
      template: null,
      template_content_type: "application/json",
      signature_scheme: "hmac-sha256",
      header_names: [],
    });
  });

  // [what, fields, message, status of the update when not 400]: an update that asks for the template
  // format without a template conflicts with the stored webhook (it has none to keep): 409.
  const refused: [string, Record<string, unknown>, RegExp, number?][] = [
    ["an unknown format", { format: "xml" }, /format must be one of/],
    [
      "a template for another format",
      { format: "slack", template: "{{ x }}" },
      /only used with format "template"/,
    ],
    ["the template format without a template", { format: "template" }, /needs a template/, 409],
    [
      "a template that does not parse, naming the line once",
      { format: "template", template: "ok\n{% if %}" },
      /template: Line 2: (?!.*Line 2)/,
    ],
    [
      "a template longer than the bound",
      { format: "template", template: "x".repeat(32_769) },
      /template must be at most 32768 characters/,
    ],
    ["an unknown signature scheme", { signature_scheme: "md5" }, /signature_scheme must be/],
    ["an unknown CloudEvents mode", { cloudevents_mode: "batch" }, /cloudevents_mode must be/],
    ["a bad content type", { template_content_type: "json" }, /template_content_type must be a media type/],
    ["Host", { headers: { Host: "evil.example" } }, /"Host" cannot be set/],
    ["Content-Length", { headers: { "content-length": "0" } }, /"content-length" cannot be set/],
    ["Transfer-Encoding", { headers: { "Transfer-Encoding": "chunked" } }, /cannot be set/],
    ["Connection", { headers: { Connection: "close" } }, /hop-by-hop/],
    ["Content-Type", { headers: { "Content-Type": "text/plain" } }, /set by the webhook's format/],
    ["an X-Webhook-* header", { headers: { "X-Webhook-Signature": "sha256=forged" } }, /service's own/],
    ["a Standard Webhooks header", { headers: { "webhook-signature": "v1,forged" } }, /Standard Webhooks/],
    ["a CloudEvents header", { headers: { "ce-type": "forged" } }, /CloudEvents attributes/],
    ["a name that is no token", { headers: { "Bad Name": "x" } }, /header name must be/],
    [
      "a value with a line break",
      { headers: { "X-Token": "secret-value\r\nX-Injected: 1" } },
      /printable ASCII/,
    ],
    ["a value too long", { headers: { "X-Token": "v".repeat(4097) } }, /longer than 4096/],
    [
      "too many headers",
      { headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"])) },
      /at most 20/,
    ],
    ["a name given twice", { headers: { "X-Token": "a", "x-token": "b" } }, /given twice/],
    ["a value that is not a string", { headers: { "X-Token": 5 } }, /must be a string/],
  ];

  it.each(refused)(
    "refuses %s with a 400 that changes nothing and quotes no value",
    async (_name, fields, message, updateStatus) => {
      const webhook = await createWebhook(service, projectId, {
        url: `${receiver.url}/r`,
        events: ["deployment.failed"],
      });
      const before = await service.api("GET", `${webhooksPath()}/${webhook.id}`);
      const listBefore = await service.api("GET", webhooksPath());
      for (const [method, path, body, status] of [
        ["POST", webhooksPath(), { url: `${receiver.url}/r`, events: ["deployment.failed"], ...fields }, 400],
        ["PUT", `${webhooksPath()}/${webhook.id}`, fields, updateStatus ?? 400],
      ] as const) {
        const answer = await service.api(method, path, { body });
        expect(answer.status).toBe(status);
        expect(answer.body.error.message).toMatch(message);
        expect(answer.text).not.toContain("secret-value");
        expect(answer.text).not.toContain("evil.example");
        expect(answer.text).not.toContain("forged");
      }
      expect((await service.api("GET", `${webhooksPath()}/${webhook.id}`)).body).toEqual(before.body);
      expect((await service.api("GET", webhooksPath())).body).toEqual(listBefore.body);
    },
  );
});

describe("CloudEvents deliveries", () => {
  it.each(["structured", "binary"] as const)(
    "%s mode is read by the npm SDK's HTTP.toEvent, and the record shows the body and headers as sent",
    async (mode) => {
      const route = `/ce-${mode}`;
      const webhook = await createWebhook(service, projectId, {
        url: `${receiver.url}${route}`,
        events: ["deployment.succeeded"],
        format: "cloudevents",
        cloudevents_mode: mode,
      });
      const request = await deliverTo(route, 1);
      const event = HTTP.toEvent({ headers: request.headers, body: request.body });
      if (Array.isArray(event)) throw new Error("one event expected");
      expect(event.type).toBe("io.webhook-operator.deployment.succeeded");
      expect(event.source).toBe(`/projects/${projectId}`);
      expect(event.subject).toBe("deployments/41");
      expect(event.specversion).toBe("1.0");
      expect(event.data).toEqual({ ...payload, project_id: projectId });
      expect(request.headers["content-type"]).toBe(
        mode === "structured" ? "application/cloudevents+json" : "application/json",
      );

      const record = await newestRecord(webhook.id);
      expect(record.payload).toBe(request.body);
      expect(event.id).toBe(record.event_id);
      for (const [name, value] of Object.entries(record.request_headers as Record<string, string>)) {
        expect(request.headers[name.toLowerCase()]).toBe(value);
      }
      if (mode === "binary") expect(record.request_headers["ce-id"]).toBe(record.event_id);
    },
  );

  it("a delivery handed over at emit (not claimed) is shaped the same way", async () => {
    const route = "/ce-handed";
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}${route}`,
      events: ["deployment.succeeded"],
      format: "cloudevents",
      cloudevents_mode: "binary",
      signature_scheme: "standard-webhooks",
      secret,
    });
    const handOver = service.engine.handOverLease();
    const { handedOver } = await withTransaction(service.pool, (client) =>
      emitEvents(
        client,
        [{ eventType: "deployment.succeeded", projectId, payload: { ...payload, project_id: projectId } }],
        handOver,
      ),
    );
    expect(handedOver.map((delivery) => delivery.webhook_id)).toContain(webhook.id);
    service.engine.handOver(handedOver);
    const request = await waitUntil("receiver.requests.find((r) => r.path === route)", async () =>
      receiver.requests.find((r) => r.path === route),
    );
    const record = await newestRecord(webhook.id);
    expect(request.headers["ce-id"]).toBe(record.event_id);
    expect(request.headers["webhook-id"]).toBe(record.event_id);
    expect(JSON.parse(request.body)).toEqual({ ...payload, project_id: projectId });
    const headers = request.headers as Record<string, string>;
    expect(new StandardWebhook(standardWebhooksSecret(secret)).verify(request.body, headers)).toBeTruthy();
  });

  it("binary and structured events are read by the Python SDK (from_http_event) in a real receiver", async (context) => {
    if (!python) context.skip();
    for (const mode of ["structured", "binary"]) {
      const webhook = await createWebhook(service, projectId, {
        url: `${python?.url}/cloudevents`,
        events: ["deployment.succeeded"],
        format: "cloudevents",
        cloudevents_mode: mode,
      });
      await emit(service.pool, projectId, "deployment.succeeded", { ...payload, project_id: projectId });
      const record = await newestRecord(webhook.id);
      expect(record.status_code).toBe(200);
      expect(JSON.parse(record.response_body)).toEqual({
        id: record.event_id,
        type: "io.webhook-operator.deployment.succeeded",
        source: `/projects/${projectId}`,
        subject: "deployments/41",
        specversion: "1.0",
        data: { ...payload, project_id: projectId },
      });
      await service.api("DELETE", `${webhooksPath()}/${webhook.id}`);
    }
  });
});

describe("Standard Webhooks signatures", () => {
  it.each([
    ["a plain secret", secret],
    ["a whsec_ secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  ])("with %s, verify with the npm library and fail with another secret", async (_name, webhookSecret) => {
    const route = `/sw-${webhookSecret.slice(0, 5)}`;
    await createWebhook(service, projectId, {
      url: `${receiver.url}${route}`,
      events: ["deployment.succeeded"],
      secret: webhookSecret,
      signature_scheme: "standard-webhooks",
    });
    const request = await deliverTo(route, 1);
    const headers = request.headers as Record<string, string>;
    const verified = new StandardWebhook(standardWebhooksSecret(webhookSecret)).verify(request.body, headers);
    expect(verified).toEqual(JSON.parse(request.body));
    expect(headers["webhook-id"]).toBe(JSON.parse(request.body).id);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(headers["x-webhook-signature"]).toBeUndefined();
    const other = new StandardWebhook(standardWebhooksSecret("another-secret"));
    expect(() => other.verify(request.body, headers)).toThrow();
  });

  it("verifies with the Python library in a real receiver, for the envelope and for CloudEvents", async (context) => {
    if (!python) context.skip();
    for (const format of ["envelope", "cloudevents"]) {
      const webhook = await createWebhook(service, projectId, {
        url: `${python?.url}/standard-webhooks`,
        events: ["deployment.succeeded"],
        secret,
        format,
        signature_scheme: "standard-webhooks",
      });
      await emit(service.pool, projectId, "deployment.succeeded", { ...payload, project_id: projectId });
      const record = await newestRecord(webhook.id);
      expect(record.response_body).not.toContain("error");
      expect(record.status_code).toBe(200);
      expect(JSON.parse(record.response_body).verified).toEqual(JSON.parse(record.payload));
      await service.api("DELETE", `${webhooksPath()}/${webhook.id}`);
    }
  });

  it("verifies with the Go library in a real receiver, and refuses a delivery signed with another secret", async (context) => {
    if (!goReceiver) context.skip();
    for (const [webhookSecret, status] of [
      [secret, 200],
      ["another-secret", 400],
    ] as const) {
      const webhook = await createWebhook(service, projectId, {
        url: `${goReceiver?.url}/standard-webhooks`,
        events: ["deployment.succeeded"],
        secret: webhookSecret,
        format: "cloudevents",
        signature_scheme: "standard-webhooks",
      });
      await emit(service.pool, projectId, "deployment.succeeded", { ...payload, project_id: projectId });
      const record = await newestRecord(webhook.id);
      expect(record.status_code, record.response_body).toBe(status);
      if (status === 200) expect(JSON.parse(record.response_body)).toEqual({ verified: true });
      await service.api("DELETE", `${webhooksPath()}/${webhook.id}`);
    }
  });
});

describe("custom headers, replays and previews", () => {
  it("custom headers arrive at the receiver; records show them masked", async () => {
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/custom`,
      events: ["deployment.succeeded"],
      secret,
      headers: { Authorization: apiKeyValue },
    });
    const request = await deliverTo("/custom", 1);
    expect(request.headers.authorization).toBe(apiKeyValue);
    expect(request.headers["x-webhook-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    const record = await newestRecord(webhook.id);
    expect(record.payload).toBe(request.body);
    expect(record.request_headers.Authorization).toBe("********");
    const records = await service.api("GET", `${webhooksPath()}/${webhook.id}/deliveries`);
    expect(records.text).not.toContain("sk-live");
  });

  it("a body that cannot be rendered is recorded as a failed delivery and nothing is sent", async () => {
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/unrenderable`,
      events: ["deployment.succeeded"],
      format: "cloudevents",
    });
    // A format this version does not know (a row written by a newer one) cannot render.
    await service.pool.query("UPDATE webhooks SET format = 'future-format' WHERE id = $1", [webhook.id]);
    await emit(service.pool, projectId, "deployment.succeeded", { ...payload, project_id: projectId });
    const record = await newestRecord(webhook.id);
    expect(record).toMatchObject({ success: false, status_code: 0, request_headers: null });
    expect(record.error_message).toBe(
      'Not sent: the future-format body could not be rendered: unknown format "future-format"',
    );
    expect(receiver.requests.filter((r) => r.path === "/unrenderable")).toHaveLength(0);
  });

  it("a replay sends the same bytes with the same ids", async () => {
    const route = "/replay";
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}${route}`,
      events: ["deployment.succeeded"],
      secret,
      format: "cloudevents",
      cloudevents_mode: "binary",
      signature_scheme: "standard-webhooks",
    });
    const first = await deliverTo(route, 1);
    const record = await newestRecord(webhook.id);
    // A change of format since does not change what a replay of this delivery sends.
    await service.api("PUT", `${webhooksPath()}/${webhook.id}`, { body: { cloudevents_mode: "structured" } });
    const retry = await service.api("POST", `${webhooksPath()}/${webhook.id}/deliveries/${record.id}/retry`);
    expect(retry.status).toBe(200);
    expect(retry.body.success).toBe(true);
    const second = await waitUntil(
      "receiver.requests.filter((r) => r.path === route)[1]",
      async () => receiver.requests.filter((r) => r.path === route)[1],
    );
    expect(second.body).toBe(first.body);
    for (const name of ["content-type", "ce-id", "ce-type", "ce-source", "ce-time", "webhook-id"]) {
      expect(second.headers[name]).toBe(first.headers[name]);
    }
    const verified = new StandardWebhook(standardWebhooksSecret(secret)).verify(
      second.body,
      second.headers as Record<string, string>,
    );
    expect(verified).toEqual(JSON.parse(first.body));
    const replayed = await newestRecord(webhook.id, 2);
    expect(replayed.payload).toBe(first.body);
  });

  it("a preview shows what a send of the same event sends", async () => {
    const route = "/preview";
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}${route}`,
      events: ["deployment.failed"],
      secret,
      format: "cloudevents",
      cloudevents_mode: "binary",
      signature_scheme: "standard-webhooks",
      headers: { Authorization: apiKeyValue },
    });
    const preview = await service.api("POST", `${webhooksPath()}/${webhook.id}/preview`, {
      body: { event_type: "deployment.failed" },
    });
    expect(preview.status).toBe(200);
    expect(preview.text).not.toContain("sk-live");
    const sent = await service.api("POST", `${webhooksPath()}/${webhook.id}/test`, {
      body: { event_type: "deployment.failed" },
    });
    expect(sent.status).toBe(200);
    const request = await waitUntil("receiver.requests.find((r) => r.path === route)", async () =>
      receiver.requests.find((r) => r.path === route),
    );
    // Nothing but the test event reached the receiver: the preview sent nothing.
    expect(receiver.requests.filter((r) => r.path === route)).toHaveLength(1);

    expect(preview.body.content_type).toBe(request.headers["content-type"]);
    const previewNames = Object.keys(preview.body.headers).map((name) => name.toLowerCase());
    const sentNames = Object.keys(request.headers).filter(
      (name) => !["host", "content-length", "connection"].includes(name),
    );
    expect(previewNames.sort()).toEqual(sentNames.sort());
    const perEvent = [
      "x-webhook-delivery",
      "x-webhook-timestamp",
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
      "ce-id",
      "ce-time",
    ];
    for (const [name, value] of Object.entries(preview.body.headers as Record<string, string>)) {
      const lower = name.toLowerCase();
      if (lower === "authorization") expect(value).toBe("********");
      else if (!perEvent.includes(lower)) expect(request.headers[lower]).toBe(value);
    }
    // The example events differ only in their times (and ids, in the headers).
    const withoutTimes = (text: string) => ({ ...JSON.parse(text), started_at: null, finished_at: null });
    expect(withoutTimes(preview.body.body)).toEqual(withoutTimes(request.body));
  });

  it("a preview of a format that cannot render answers 200 with the error and no body", async () => {
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/preview-error`,
      events: ["deployment.succeeded"],
      format: "cloudevents",
    });
    await service.pool.query("UPDATE webhooks SET format = 'future-format' WHERE id = $1", [webhook.id]);
    const preview = await service.api("POST", `${webhooksPath()}/${webhook.id}/preview`, { body: {} });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      event_type: "deployment.succeeded",
      content_type: null,
      headers: {},
      body: null,
      error: 'unknown format "future-format"',
    });
  });

  it("previews a draft without saving it, signed with the draft's secret", async () => {
    const before = await service.api("GET", webhooksPath());
    const preview = await service.api("POST", `${webhooksPath()}/preview`, {
      body: { format: "cloudevents", secret, signature_scheme: "standard-webhooks" },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.event_type).toBe("deployment.succeeded");
    expect(preview.body.content_type).toBe("application/cloudevents+json");
    const verified = new StandardWebhook(standardWebhooksSecret(secret)).verify(
      preview.body.body,
      preview.body.headers,
    );
    expect(verified).toMatchObject({
      type: "io.webhook-operator.deployment.succeeded",
      source: `/projects/${projectId}`,
    });
    expect((await service.api("GET", webhooksPath())).body).toEqual(before.body);

    const bad = await service.api("POST", `${webhooksPath()}/preview`, { body: { headers: { Host: "x" } } });
    expect(bad.status).toBe(400);
    for (const method of ["GET", "PUT", "DELETE"]) {
      const other = await service.api(method, `${webhooksPath()}/preview`);
      expect(other.status).toBe(405);
      expect(other.headers.get("allow")).toBe("POST");
    }
  });
});
