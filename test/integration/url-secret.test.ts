import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// A chat-format URL is a credential: with url_secret the API never shows it again (the webhook, the
// list, delivery errors, test events and replays show scheme://host/********), while deliveries still
// go to the whole URL. Without it, every answer is exactly as before. Nor does the service's log,
// at debug level, ever hold the token.

const token = "T0AAAA/B0BBBB/xoxSecretTokenValue";
let service: TestService;
let receiver: Receiver;
let projectId: number;
let logged = "";
const log = new Writable({
  write(chunk, _encoding, done) {
    logged += String(chunk);
    done();
  },
});

beforeAll(async () => {
  [service, receiver] = await Promise.all([
    startTestService({}, { logger: pino({ level: "debug" }, log) }),
    startReceiver(),
  ]);
  projectId = await createProject(service, "chat", "Chat");
});
afterAll(async () => Promise.all([service?.close(), receiver?.close()]));

const webhooksPath = () => `/projects/${projectId}/webhooks`;
const secretUrl = (route: string) => `${receiver.url}/${route}/${token}`;
const masked = () => `${receiver.url}/********`;

describe("url_secret", () => {
  it("is absent and changes nothing for a webhook that does not opt in", async () => {
    const url = `${receiver.url}/plain/T0AAAA/B0BBBB/xoxPlainUrl`;
    const created = await createWebhook(service, projectId, { url, events: ["deployment.succeeded"] });
    expect(created.url).toBe(url);
    expect(Object.keys(created)).not.toContain("url_secret");
    expect((await service.api("GET", `${webhooksPath()}/${created.id}`)).body).toEqual(created);
  });

  it("shows the URL masked in every answer about the webhook, and delivers to the whole URL", async () => {
    const created = await createWebhook(service, projectId, {
      url: secretUrl("slack"),
      events: ["deployment.succeeded"],
      format: "slack",
      url_secret: true,
    });
    expect(created).toMatchObject({ url: masked(), url_secret: true });
    const read = await service.api("GET", `${webhooksPath()}/${created.id}`);
    const list = await service.api("GET", webhooksPath());
    const page = await service.api("GET", `${webhooksPath()}?page=1`);
    for (const answer of [read, list, page]) expect(answer.text).not.toContain("xoxSecretTokenValue");
    expect(read.body).toEqual(created);
    const { rows } = await service.pool.query("SELECT url FROM webhooks WHERE id = $1", [created.id]);
    expect(rows[0].url).toBe(secretUrl("slack"));

    await emit(service.pool, projectId, "deployment.succeeded");
    const request = await waitUntil("a request to /slack/<token>", async () =>
      receiver.requests.find((r) => r.path.startsWith("/slack/")),
    );
    expect(request.path).toBe(`/slack/${token}`);
  });

  it("masks the URL in the errors of deliveries, test events and replays", async () => {
    receiver.on(`/down/${token}`, (_request, res) => res.writeHead(503).end("down"));
    const webhook = await createWebhook(service, projectId, {
      url: secretUrl("down"),
      events: ["deployment.failed"],
      url_secret: true,
    });
    const base = `${webhooksPath()}/${webhook.id}`;
    const tested = await service.api("POST", `${base}/test`, { body: { event_type: "deployment.failed" } });
    expect(tested.body.error_message).toBe(
      `HTTP 503 error from ${masked()}: Service Unavailable. The endpoint rejected the request.`,
    );
    const [record] = await deliveriesOf(service, projectId, webhook.id);
    expect(record?.error_message).toBe(tested.body.error_message);
    const shown = await service.api("GET", `${base}/deliveries/${record?.id}`);
    const retried = await service.api("POST", `${base}/deliveries/${record?.id}/retry`);
    expect(retried.body.error_message).toBe(tested.body.error_message);
    for (const answer of [tested, shown, retried]) expect(answer.text).not.toContain("xoxSecretTokenValue");
  });

  it("keeps the URL when the masked one is sent back, and shows it again only with a new URL", async () => {
    const webhook = await createWebhook(service, projectId, {
      url: secretUrl("kept"),
      events: ["deployment.succeeded"],
      url_secret: true,
    });
    const path = `${webhooksPath()}/${webhook.id}`;
    const written = await service.api("PUT", path, {
      body: { url: webhook.url, events: ["deployment.failed"] },
    });
    expect(written.body).toMatchObject({ url: masked(), events: ["deployment.failed"] });
    const stored = async () =>
      (await service.pool.query("SELECT url FROM webhooks WHERE id = $1", [webhook.id])).rows[0].url;
    expect(await stored()).toBe(secretUrl("kept"));

    const before = (await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [webhook.id])).rows;
    const refused = await service.api("PUT", path, { body: { url_secret: false } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(
      "The webhook's url is a secret: url_secret can be turned off only with a new url in the same request.",
    );
    expect((await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [webhook.id])).rows).toEqual(
      before,
    );

    const shown = await service.api("PUT", path, {
      body: { url_secret: false, url: `${receiver.url}/public` },
    });
    expect(shown.body.url).toBe(`${receiver.url}/public`);
    expect(Object.keys(shown.body)).not.toContain("url_secret");
    const hidden = await service.api("PUT", path, { body: { url_secret: true } });
    expect(hidden.body).toMatchObject({ url: masked(), url_secret: true });
  });

  it.each([
    ["a string", "yes"],
    ["null", null],
  ])("refuses url_secret as %s with 400", async (_name, value) => {
    const answer = await service.api("POST", webhooksPath(), {
      body: { url: secretUrl("bad"), events: ["deployment.succeeded"], url_secret: value },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain("url_secret must be a boolean");
  });

  it("never writes the token to the service's log, at debug level, after everything above", () => {
    expect(logged).toContain("listening"); // the log is this service's, and was written
    expect(logged).not.toContain("xoxSecretTokenValue");
  });
});
