import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/client/api-client.js";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { eventTypeNames } from "../../src/event-types.js";
import { createProject } from "../support/api-fixtures.js";
import { assertBuilt, type CliOptions, runCli } from "../support/cli.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// The `webhooks` command group (alias `hooks`), run as users run it: the built binary in a child
// process against the real service and database. cli-errors.test.ts covers the failure paths.

let service: TestService;
let receiver: Receiver;
let projectId: number;

/** Runs the binary against this file's service. */
function cli(args: string[], options: CliOptions = {}) {
  return runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, args, options);
}

/** Runs a command that must succeed, quietly, and returns its stdout. */
async function ok(args: string[], options?: CliOptions): Promise<string> {
  const result = await cli(args, options);
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
  return result.stdout;
}

const json = async (args: string[], options?: CliOptions) =>
  JSON.parse(await ok([...args, "--json"], options));

const ids = (webhookId: number) => ["--project-id", String(projectId), "--webhook-id", String(webhookId)];

/** The webhook's signing secret as stored (sealed at rest), opened with the service's keys. */
async function storedSecret(webhookId: number): Promise<string | null> {
  const { rows } = await service.pool.query<{ secret: string | null }>(
    "SELECT secret FROM webhooks WHERE id = $1",
    [webhookId],
  );
  const sealed = rows[0]?.secret ?? null;
  return sealed === null ? null : testSecretBox().open(sealed);
}

/** Creates a webhook through the CLI (--json) and returns the API's answer. */
async function createWebhook(extra: string[] = [], options?: CliOptions) {
  return json(
    [
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      `${receiver.url}/hooks`,
      "--events",
      "deployment.succeeded,deployment.failed",
      ...extra,
    ],
    options,
  );
}

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  receiver = await startReceiver();
  // Set-up goes through the same typed client the binary uses.
  const client = new ApiClient({ baseUrl: service.baseUrl, apiKey: service.adminKey });
  projectId = (await client.createProject({ name: "Shop", slug: "shop" })).id;
});

afterAll(async () => {
  await receiver?.close();
  await service?.close();
});

describe("webhooks events", () => {
  it("prints every event type as a table, and the API's list with --json", async () => {
    const stdout = await ok(["webhooks", "events"]);
    const [header, ...rows] = stdout.trimEnd().split("\n");
    expect(header).toMatch(/^EVENT_TYPE\s+CATEGORY\s+DESCRIPTION$/);
    expect(rows.map((row) => row.split(/\s+/)[0])).toEqual(eventTypeNames);
    expect(await json(["webhooks", "events"])).toEqual(
      (await service.api("GET", "/webhook-event-types")).body,
    );
  });
});

describe("webhooks create", () => {
  it("creates a webhook and prints it as key: value lines", async () => {
    const stdout = await ok([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      `${receiver.url}/created`,
      "--events",
      "deployment.succeeded, deployment.failed",
    ]);
    expect(stdout).toMatch(/^id: +\d+$/m);
    expect(stdout).toMatch(new RegExp(`^url: +${receiver.url}/created$`, "m"));
    expect(stdout).toMatch(/^events: +deployment\.succeeded, deployment\.failed$/m);
    expect(stdout).toMatch(/^enabled: +true$/m);
    expect(stdout).toMatch(/^has_secret: +false$/m);
  });

  it("prints the API's webhook with --json, and creates disabled webhooks with --enabled false", async () => {
    const webhook = await createWebhook(["--enabled", "false"]);
    expect(webhook).toMatchObject({ project_id: projectId, enabled: false, has_secret: false });
    expect(webhook).toEqual((await service.api("GET", `/projects/${projectId}/webhooks/${webhook.id}`)).body);
  });

  it("expands --events all to every event type", async () => {
    expect((await createWebhook(["--events", "all"])).events).toEqual(eventTypeNames);
  });

  it("takes the secret from --secret", async () => {
    const webhook = await createWebhook(["--secret", "from-flag"]);
    expect(webhook.has_secret).toBe(true);
    expect(await storedSecret(webhook.id)).toBe("from-flag");
  });

  it("takes the secret from stdin with --secret-stdin, without the trailing newline", async () => {
    const webhook = await createWebhook(["--secret-stdin"], { input: "from-stdin\n" });
    expect(await storedSecret(webhook.id)).toBe("from-stdin");
  });

  it("takes the secret from WEBHOOK_SECRET when no secret option is given", async () => {
    const fromEnv = await createWebhook([], { env: { WEBHOOK_SECRET: "from-env" } });
    expect(await storedSecret(fromEnv.id)).toBe("from-env");
    const flagWins = await createWebhook(["--secret", "from-flag"], { env: { WEBHOOK_SECRET: "from-env" } });
    expect(await storedSecret(flagWins.id)).toBe("from-flag");
    const stdinWins = await createWebhook(["--secret-stdin"], {
      env: { WEBHOOK_SECRET: "from-env" },
      input: "from-stdin",
    });
    expect(await storedSecret(stdinWins.id)).toBe("from-stdin");
  });
});

describe("webhooks list and show", () => {
  it("lists a project's webhooks as a table, newest first, and as the API's array with --json", async () => {
    const listed = await json(["webhooks", "list", "--project-id", String(projectId)]);
    expect(listed).toEqual((await service.api("GET", `/projects/${projectId}/webhooks`)).body);
    const [header, ...rows] = (await ok(["webhooks", "list", "--project-id", String(projectId)]))
      .trimEnd()
      .split("\n");
    expect(header).toMatch(/^ID\s+URL\s+EVENTS\s+FORMAT\s+ENABLED\s+HAS_SECRET\s+RETRIES\s+UPDATED_AT$/);
    expect(rows.map((row) => Number(row.split(/\s+/)[0]))).toEqual(listed.map((w: { id: number }) => w.id));
    const allEvents = listed.find((w: { events: string[] }) => w.events.length === eventTypeNames.length);
    expect(rows.find((row) => row.startsWith(`${allEvents.id} `))).toMatch(/ all \(12\) /);
  });

  it("says so when a project has no webhooks", async () => {
    const other = await createProject(service, "empty", "Empty");
    expect(await ok(["webhooks", "list", "--project-id", String(other)])).toBe("No webhooks.\n");
    expect(await json(["webhooks", "list", "--project-id", String(other)])).toEqual([]);
  });

  it("shows one webhook with every field", async () => {
    const created = await createWebhook(["--secret", "s"]);
    const stdout = await ok(["webhooks", "show", ...ids(created.id)]);
    // The format fields show only when not the default, in short labels: cli-formats.test.ts; the rate
    // limit and a pause only when set (below).
    const folded = [
      "rate_limit",
      "throttled_until",
      "format",
      "cloudevents_mode",
      "template",
      "template_content_type",
      "signature_scheme",
      "header_names",
    ];
    for (const [key, value] of Object.entries(created).filter(([key]) => !folded.includes(key))) {
      const text = Array.isArray(value) ? value.join(", ") : value === null ? "-" : String(value);
      expect(stdout).toContain(`${key}:`.padEnd(17) + text);
    }
    expect(await json(["webhooks", "show", ...ids(created.id)])).toEqual(created);
  });

  it("sets, shows and turns off the retry policy and auto-disable", async () => {
    const created = await json([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      `${receiver.url}/policies`,
      "--events",
      "deployment.failed",
      "--retry-max-attempts",
      "3",
      "--auto-disable",
      "10:3600",
    ]);
    expect(created).toMatchObject({
      retry_policy: { max_attempts: 3 },
      auto_disable: { after_failures: 10, min_duration_seconds: 3600 },
    });
    const shown = await ok(["webhooks", "show", ...ids(created.id)]);
    expect(shown).toContain("retry_policy:    up to 3 attempts\n");
    expect(shown).toContain("auto_disable:    after 10 failures in a row over at least 3600 s\n");
    expect(shown).toContain("disabled_reason: -\n");
    const row = (await ok(["webhooks", "list", "--project-id", String(projectId)]))
      .split("\n")
      .find((line) => line.startsWith(`${created.id} `));
    expect(row?.split(/\s{2,}/)).toEqual([
      String(created.id),
      created.url,
      "deployment.failed",
      "envelope",
      "true",
      "false",
      "3",
      created.updated_at,
    ]);

    const off = await json([
      "webhooks",
      "update",
      ...ids(created.id),
      "--retry-max-attempts",
      "off",
      "--auto-disable",
      "off",
    ]);
    expect(off).toMatchObject({ retry_policy: null, auto_disable: null });
  });

  it("sets, shows and turns off a rate limit", async () => {
    const created = await createWebhook(["--rate-limit", "2.5:20"]);
    expect(created.rate_limit).toEqual({ per_second: 2.5, burst: 20 });
    expect(await ok(["webhooks", "show", ...ids(created.id)])).toContain(
      "rate_limit:      2.5/s, burst 20\n",
    );
    const off = await json(["webhooks", "update", ...ids(created.id), "--rate-limit", "off"]);
    expect(off.rate_limit).toBeNull();
    expect(await ok(["webhooks", "show", ...ids(created.id)])).not.toContain("rate_limit");
  });
});

describe("webhooks update, enable, disable, remove", () => {
  it("replaces the subscription with --events all, keeping the other fields", async () => {
    const created = await createWebhook(["--secret", "keep-me"]);
    const stdout = await ok(["webhooks", "update", ...ids(created.id), "--events", "all"]);
    expect(stdout).toContain(`events:          ${eventTypeNames.join(", ")}`);
    const updated = await json(["webhooks", "show", ...ids(created.id)]);
    expect(updated).toMatchObject({
      url: created.url,
      enabled: true,
      has_secret: true,
      events: eventTypeNames,
    });
    expect(updated.updated_at > created.updated_at).toBe(true);
    expect(await storedSecret(created.id)).toBe("keep-me");
  });

  it("changes the url and enabled flag, replaces the secret, and removes it", async () => {
    const created = await createWebhook(["--secret", "old"]);
    const updated = await json([
      "webhooks",
      "update",
      ...ids(created.id),
      "--url",
      `${receiver.url}/moved`,
      "--enabled",
      "false",
      "--secret",
      "new",
    ]);
    expect(updated).toMatchObject({ url: `${receiver.url}/moved`, enabled: false, events: created.events });
    expect(await storedSecret(created.id)).toBe("new");
    await json(["webhooks", "update", ...ids(created.id), "--secret-stdin"], { input: "newer\n" });
    expect(await storedSecret(created.id)).toBe("newer");
    const removed = await json(["webhooks", "update", ...ids(created.id), "--remove-secret"]);
    expect(removed.has_secret).toBe(false);
    expect(await storedSecret(created.id)).toBeNull();
  });

  it("does not write WEBHOOK_SECRET on update", async () => {
    const created = await createWebhook(["--secret", "original"]);
    await ok(["webhooks", "update", ...ids(created.id), "--events", "deployment.ready"], {
      env: { WEBHOOK_SECRET: "exported" },
    });
    expect(await storedSecret(created.id)).toBe("original");
  });

  it("disables and enables a webhook", async () => {
    const created = await createWebhook();
    expect(await ok(["webhooks", "disable", ...ids(created.id)])).toMatch(/^enabled: +false$/m);
    const disabled = (await service.api("GET", `/projects/${projectId}/webhooks/${created.id}`)).body;
    expect(disabled.enabled).toBe(false);
    expect(disabled.updated_at > created.updated_at).toBe(true);
    const enabled = await json(["webhooks", "enable", ...ids(created.id)]);
    expect(enabled).toMatchObject({ id: created.id, enabled: true });
    expect(await json(["webhooks", "disable", ...ids(created.id)])).toMatchObject({ enabled: false });
  });

  it("removes a webhook, printing nothing with --json", async () => {
    const first = await createWebhook();
    expect(await ok(["webhooks", "remove", ...ids(first.id)])).toBe(
      `Removed webhook ${first.id} of project ${projectId}.\n`,
    );
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${first.id}`)).status).toBe(404);
    const second = await createWebhook();
    expect(await ok(["webhooks", "remove", ...ids(second.id), "--json"])).toBe("");
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${second.id}`)).status).toBe(404);
  });
});

describe("the hooks alias", () => {
  it("runs the same commands as webhooks", async () => {
    const created = await json([
      "hooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      `${receiver.url}/alias`,
      "--events",
      "deployment.ready",
    ]);
    expect(await json(["hooks", "show", ...ids(created.id)])).toEqual(created);
    expect(await ok(["hooks", "list", "--project-id", String(projectId)])).toContain(`${receiver.url}/alias`);
    expect(await json(["hooks", "deliveries", "list", ...ids(created.id)])).toEqual([]);
  });

  it("accepts the group's options before the subcommand too", async () => {
    expect(await ok(["hooks", "--json", "events"])).toBe(await ok(["hooks", "events", "--json"]));
  });
});

describe("webhooks test", () => {
  it("sends an example event to the receiver and prints the outcome", async () => {
    const created = await createWebhook(["--url", `${receiver.url}/test-ok`]);
    const stdout = await ok(["webhooks", "test", ...ids(created.id)]);
    expect(stdout).toMatch(/^delivery_id: +\d+$/m);
    expect(stdout).toMatch(/^success: +true$/m);
    expect(stdout).toMatch(/^status_code: +200$/m);
    const sent = receiver.requests.filter((request) => request.path === "/test-ok");
    expect(sent.map((request) => request.headers["x-webhook-event"])).toEqual(["deployment.succeeded"]);

    const result = await json(["webhooks", "test", ...ids(created.id), "--event-type", "deployment.failed"]);
    expect(result).toMatchObject({ success: true, status_code: 200, attempt_number: 1 });
    expect(JSON.parse(receiver.requests.at(-1)?.body ?? "{}")).toMatchObject({
      id: result.event_id,
      event_type: "deployment.failed",
    });
  });

  it("exits 1 when the test delivery fails, after printing the outcome", async () => {
    receiver.on("/test-fail", (_request, res) => res.writeHead(503).end("down for maintenance"));
    const created = await createWebhook(["--url", `${receiver.url}/test-fail`]);
    const result = await cli(["webhooks", "test", ...ids(created.id)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^success: +false$/m);
    expect(result.stdout).toMatch(/^status_code: +503$/m);
    expect(result.stderr).toMatch(/^error: the delivery failed: HTTP 503 error from .*\/test-fail/);
    const asJson = await cli(["webhooks", "test", ...ids(created.id), "--json"]);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ success: false, status_code: 503 });
  });
});

describe("webhooks deliveries", () => {
  let webhookId: number;
  let deliveryId: number;

  beforeAll(async () => {
    receiver.on("/flaky", (_request, res) => res.writeHead(500).end("receiver broke"));
    webhookId = (await createWebhook(["--url", `${receiver.url}/flaky`])).id;
    await withTransaction(service.pool, (client) =>
      emitEvent(client, {
        eventType: "deployment.failed",
        projectId,
        payload: { deployment_id: 7, project_id: projectId, project_name: "Shop", status: "failed" },
      }),
    );
    const path = `/projects/${projectId}/webhooks/${webhookId}/deliveries`;
    deliveryId = await waitUntil(
      "the first delivery's id",
      async () => (await service.api("GET", path)).body[0]?.id,
    );
  });

  it("lists the delivery attempts as a table, and as the API's array with --json", async () => {
    const [header, row, ...rest] = (await ok(["webhooks", "deliveries", "list", ...ids(webhookId)]))
      .trimEnd()
      .split("\n");
    expect(header).toMatch(/^ID\s+EVENT_TYPE\s+ATTEMPT\s+SUCCESS\s+STATUS_CODE\s+DELIVERED_AT\s+ERROR$/);
    expect(row).toMatch(
      new RegExp(`^${deliveryId}\\s+deployment\\.failed\\s+1\\s+false\\s+500\\s+\\S+\\s+HTTP 500`),
    );
    expect(rest).toEqual([]);
    expect(await json(["webhooks", "deliveries", "list", ...ids(webhookId)])).toEqual(
      (await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries`)).body,
    );
  });

  it("shows one delivery with its fields, the receiver's answer and the pretty-printed payload", async () => {
    const stdout = await ok([
      "webhooks",
      "deliveries",
      "show",
      ...ids(webhookId),
      "--delivery-id",
      String(deliveryId),
    ]);
    const api = (
      await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries/${deliveryId}`)
    ).body;
    expect(stdout).toMatch(new RegExp(`^id: +${deliveryId}$`, "m"));
    expect(stdout).toMatch(new RegExp(`^event_id: +${api.event_id}$`, "m"));
    expect(stdout).toMatch(/^success: +false$/m);
    expect(stdout).toContain("\nresponse_body:\nreceiver broke\n");
    // The request headers as sent, one per line, signature and all.
    const headers = Object.entries(api.request_headers as Record<string, string>);
    expect(headers.length).toBeGreaterThanOrEqual(4);
    expect(stdout).toContain(
      `\nrequest_headers:\n${headers.map(([name, value]) => `${name}: ${value}`).join("\n")}\n`,
    );
    const payload = stdout.slice(stdout.indexOf("\npayload:\n") + "\npayload:\n".length);
    expect(payload).toBe(`${JSON.stringify(JSON.parse(api.payload), null, 2)}\n`);
    expect(
      await json(["webhooks", "deliveries", "show", ...ids(webhookId), "--delivery-id", String(deliveryId)]),
    ).toEqual(api);
  });

  it("retries a failed delivery: exit 1 while the receiver fails, 0 once it answers", async () => {
    const retry = ["webhooks", "deliveries", "retry", ...ids(webhookId), "--delivery-id", String(deliveryId)];
    const failed = await cli(retry);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^success: +false$/m);
    expect(failed.stdout).toMatch(/^attempt_number: +2$/m);
    expect(failed.stderr).toMatch(/^error: the delivery failed: HTTP 500 error from/);

    receiver.on("/flaky", (_request, res) => res.writeHead(200).end("ok"));
    const stdout = await ok(retry);
    expect(stdout).toMatch(/^success: +true$/m);
    expect(stdout).toMatch(/^status_code: +200$/m);
    expect(stdout).toMatch(/^attempt_number: +3$/m);
    expect(await json(retry)).toEqual({
      success: true,
      status_code: 200,
      error_message: null,
      attempt_number: 4,
      delivery_id: expect.any(Number),
    });
  });

  it("recovers the failed events since a time: queued through the service, sent once each", async () => {
    const recover = ["webhooks", "deliveries", "recover", ...ids(webhookId), "--since", "1h"];
    // The receiver answers 200 by now and the retries above succeeded: nothing is left to recover.
    expect(await ok(recover)).toMatch(/^queued 0 events failed between \S+ and \S+\n$/);
    receiver.on("/flaky", (_request, res) => res.writeHead(500).end("down again"));
    const path = `/projects/${projectId}/webhooks/${webhookId}/deliveries`;
    const before = (await service.api("GET", `${path}?limit=100`)).body.length;
    await withTransaction(service.pool, (client) =>
      emitEvent(client, { eventType: "deployment.failed", projectId, payload: { deployment_id: 2 } }),
    );
    await waitUntil("one more delivery in the list", async () =>
      (await service.api("GET", `${path}?limit=100`)).body.length > before ? true : undefined,
    );
    receiver.on("/flaky", (_request, res) => res.writeHead(200).end("ok"));
    expect(await ok([...recover, "--event-type", "deployment.failed"])).toMatch(
      /^queued 1 deployment\.failed event failed between \S+ and \S+\n$/,
    );
    const newest = await waitUntil("latest?.attempt_number === 2", async () => {
      const [latest] = (await service.api("GET", path)).body;
      return latest?.attempt_number === 2 ? latest : undefined;
    });
    expect(newest).toMatchObject({ success: true, event_type: "deployment.failed" });
    const bad = await cli([...recover.slice(0, -1), "yesterday"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "It must be a duration back from now (30m, 2h, 7d) or an ISO 8601 date-time with its zone (2026-11-22T10:00:00Z).",
    );
    // A day that does not exist, and a time without its zone, are refused rather than guessed at.
    for (const when of ["2026-02-30T00:00:00Z", "2026-11-22T10:00:00"]) {
      expect((await cli([...recover.slice(0, -1), when])).code).toBe(2);
    }
    const zoned = await ok([
      ...recover.slice(0, -1),
      "2026-11-22T10:00:00+02:00",
      "--until",
      "2026-11-22T09:00:00Z",
    ]);
    expect(zoned).toMatch(/between 2026-11-22T08:00:00\.000Z and 2026-11-22T09:00:00\.000Z/);
    const inverted = await cli([...recover, "--until", "2h"]);
    expect(inverted.code).toBe(2);
    expect(inverted.stderr).toMatch(/^error: --until \(\S+\) must be later than --since \(\S+\)/);
  });

  it("limits the list with --limit", async () => {
    const all = await json(["webhooks", "deliveries", "list", ...ids(webhookId)]);
    expect(all.length).toBeGreaterThan(2);
    const two = await json(["webhooks", "deliveries", "list", ...ids(webhookId), "--limit", "2"]);
    expect(two).toEqual(all.slice(0, 2));
  });
});
