import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { docSection } from "../support/docs.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// What the user documentation says about the wire, checked against real deliveries to a real receiver:
// the order of a delivery's headers, what a webhook's rate limit holds back and what it does not,
// which test-event bodies are taken, what a delivery of a template that is not JSON records, and how a
// secret URL is answered.

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  [service, receiver] = await Promise.all([startTestService(), startReceiver()]);
  projectId = await createProject(service, "wire", "Wire");
});
afterAll(async () => Promise.all([service?.close(), receiver?.close()]));

describe("docs/formats.md, custom request headers", () => {
  it("sends them in name order after the service's own headers and before User-Agent, as it says", async () => {
    const { text } = docSection("### Custom request headers");
    expect(text.replace(/\s+/g, " ")).toContain(
      "They are sent in name order after the body's and the service's own headers (`Content-Type`, the " +
        "format's, `X-Webhook-…`, the signature scheme's) and before `User-Agent`, which ends every delivery's headers.",
    );
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/ordered`,
      events: ["deployment.succeeded"],
      secret: "order-secret",
      headers: { "X-Api-Key": "key-1", Authorization: "Bearer order-token" },
    });
    await emit(service.pool, projectId, "deployment.succeeded");
    const [request] = await receiver.waitFor(1);
    // Node keeps a request's header names in the order they arrived; the connection's own (Host,
    // Content-Length, Connection) are the HTTP client's and come last.
    const sent = Object.keys(request?.headers ?? {}).filter(
      (name) => !["host", "content-length", "connection"].includes(name),
    );
    expect(sent).toEqual([
      "content-type",
      "x-webhook-event",
      "x-webhook-delivery",
      "x-webhook-timestamp",
      "x-webhook-signature",
      "authorization",
      "x-api-key",
      "user-agent",
    ]);
    // The preview lists them in the same order.
    const preview = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/preview`, {
      body: {},
    });
    expect(Object.keys(preview.body.headers).map((name) => name.toLowerCase())).toEqual(sent);
  });
});

describe("docs/deliveries.md, pace", () => {
  it("sends test events at once whatever the webhook's rate limit, taking no token", async () => {
    const { text } = docSection("## Pace");
    expect(text).toContain("**Not for test events, previews and replays.**");
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/paced`,
      events: ["deployment.succeeded"],
      rate_limit: { per_second: 1, burst: 1 },
    });
    const path = `/projects/${projectId}/webhooks/${webhook.id}/test`;
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push((await service.api("POST", path)).body);
    expect(outcomes.map((outcome) => [outcome.success, outcome.status_code])).toEqual(
      Array.from({ length: 6 }, () => [true, 200]),
    );
    expect(receiver.requests.filter((r) => r.path === "/paced")).toHaveLength(6);
    // The bucket was never touched: it was filled (1 token, the burst) when the limit was set, and the
    // workers' claims are what take from it.
    const { rows } = await service.pool.query(
      "SELECT tokens, refilled_at FROM webhook_pace WHERE webhook_id = $1",
      [webhook.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].tokens).toBe(1);
  });
});

describe("docs/api.md, test events", () => {
  it("takes a JSON null body as {}, and the API description says so", async () => {
    expect(docSection("## Test events").text).toContain("or be\nJSON `null`");
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/null-body`,
      events: ["deployment.succeeded"],
    });
    const sent = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/test`, {
      rawBody: "null",
      contentType: "application/json",
    });
    expect(sent.status).toBe(200);
    expect(sent.body.success).toBe(true);
    const docs = await service.api("GET", "/docs");
    const testPath = Object.keys(docs.body.paths ?? {}).find((key) =>
      key.endsWith("/webhooks/{webhook_id}/test"),
    );
    expect(testPath).toBeDefined();
    const operation = docs.body.paths[testPath as string].post;
    expect(operation.description).toContain("or be JSON null: each is taken as {}");
  });
});

describe("docs/formats.md, JSON output is checked", () => {
  it("records a delivery whose template output is not JSON with the message the page quotes, position and all", async () => {
    const { text } = docSection("## Templates");
    const quoted = /the delivery fails with `(Not sent: [^`]+)`/.exec(text.replace(/\s+/g, " "))?.[1];
    expect(quoted).toBe(
      "Not sent: the template body could not be rendered: The template's output is not valid JSON (at position …), and the webhook declares application/json.",
    );
    // Saved because the examples render to JSON; a real event from production does not (a trailing
    // comma), and goes through the workers as any rollout's event would.
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/not-json`,
      events: ["deployment.succeeded"],
      format: "template",
      template: '{% if payload.environment == "production" %}{"a": 1,}{% else %}{}{% endif %}',
    });
    await emit(service.pool, projectId, "deployment.succeeded", {
      deployment_id: 5,
      environment: "production",
    });
    const [record] = await waitUntil("the delivery's record", async () => {
      const records = await deliveriesOf(service, projectId, webhook.id);
      return records.length > 0 ? records : undefined;
    });
    const [before, after] = (quoted as string).split("…");
    expect(record.success).toBe(false);
    expect(record.error_message).toMatch(new RegExp(`^${literal(before)}\\d+${literal(after)}$`));
    expect(receiver.requests.filter((r) => r.path === "/not-json")).toHaveLength(0);
  });
});

describe("docs/formats.md, a chat URL is a secret through the API too", () => {
  it("answers a Slack webhook with url_secret as the page shows", async () => {
    const { text } = docSection("### A chat URL is a secret through the API too");
    const shown = /```json\n(\{.*), …\}\n```/.exec(text)?.[1];
    expect(shown).toBeDefined();
    const webhook = await createWebhook(service, projectId, {
      url: "https://hooks.slack.com/services/T0AAAA/B0BBBB/xoxDocsExample",
      events: ["deployment.succeeded"],
      format: "slack",
      url_secret: true,
    });
    const read = await service.api("GET", `/projects/${projectId}/webhooks/${webhook.id}`);
    expect(read.body).toMatchObject(JSON.parse(`${shown}}`));
    expect(read.text).not.toContain("xoxDocsExample");
  });
});

const literal = (text: string | undefined) => (text ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
