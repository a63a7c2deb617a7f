import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiClientError, ApiNetworkError } from "../../src/client/api-client.js";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { assertBuilt, type CliOptions, runCli } from "../support/cli.js";
import { freePort } from "../support/ports.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// The failure paths of the `webhooks` command group, through the built binary against the real
// service: usage mistakes exit 2 with the command's usage, API and network failures exit 1 with the
// server's message and status or the address tried, and nothing ever prints a stack trace.
// (The helpers at the top are the same as in cli.test.ts.)

let service: TestService;
let projectId: number;
let webhookId: number;

/** Runs the binary against this file's service. */
function cli(args: string[], options: CliOptions = {}) {
  return runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, args, options);
}

const stackTrace = /^\s+at .+:\d+:\d+\)?$/m;

/** Runs a command that must fail with `code`, printing nothing on stdout and no stack trace. */
async function fails(code: number, args: string[], options?: CliOptions): Promise<string> {
  const result = await cli(args, options);
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe("");
  expect(result.stderr).not.toMatch(stackTrace);
  return result.stderr;
}

/** A loopback address nothing listens on. */
async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

const ids = () => ["--project-id", String(projectId), "--webhook-id", String(webhookId)];

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  const client = new ApiClient({ baseUrl: service.baseUrl, apiKey: service.adminKey });
  projectId = (await client.createProject({ name: "Shop", slug: "shop" })).id;
  webhookId = (
    await client.createWebhook(projectId, {
      url: "http://127.0.0.1:9/hooks",
      events: ["deployment.succeeded"],
    })
  ).id;
});

afterAll(async () => {
  await service?.close();
});

describe("--help", () => {
  it.each([
    [[], "webhook-operator [options] [command]"],
    [["webhooks"], "webhook-operator webhooks|hooks [options] [command]"],
    [["hooks"], "webhook-operator webhooks|hooks [options] [command]"],
    [["webhooks", "deliveries"], "webhook-operator webhooks deliveries [options] [command]"],
    [["webhooks", "create"], "webhook-operator webhooks create [options]"],
    [["hooks", "update"], "webhook-operator webhooks update [options]"],
    [["webhooks", "deliveries", "retry"], "webhook-operator webhooks deliveries retry [options]"],
    [["serve"], "webhook-operator serve [options]"],
  ])("prints the usage of %j and exits 0", async (command, usage) => {
    const result = await cli([...command, "--help"], { env: { WEBHOOK_OPERATOR_API_KEY: undefined } });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain(`Usage: ${usage}\n`);
  });

  it("lists the commands at each level", async () => {
    const root = (await cli(["--help"])).stdout;
    expect(root).toMatch(/^ {2}serve /m);
    expect(root).toMatch(/^ {2}webhooks\|hooks /m);
    const group = (await cli(["hooks", "--help"])).stdout;
    for (const name of [
      "create",
      "list",
      "show",
      "update",
      "enable",
      "disable",
      "remove",
      "events",
      "test",
    ]) {
      expect(group).toMatch(new RegExp(`^ {2}${name} `, "m"));
    }
    expect(group).toMatch(/^ {2}deliveries /m);
    const deliveries = (await cli(["hooks", "deliveries", "--help"])).stdout;
    for (const name of ["list", "show", "retry"])
      expect(deliveries).toMatch(new RegExp(`^ {2}${name} `, "m"));
  });

  it("documents the spec's option names on each subcommand", async () => {
    const options: [string[], string[]][] = [
      [
        ["create"],
        ["--project-id <id>", "--url <url>", "--events <names>", "--secret <value>", "--secret-stdin"],
      ],
      [["list"], ["--project-id <id>"]],
      [["show"], ["--project-id <id>", "--webhook-id <id>"]],
      [["update"], ["--events <names>", "--url <url>", "--enabled <true|false>", "--remove-secret"]],
      [["enable"], ["--project-id <id>", "--webhook-id <id>"]],
      [["disable"], ["--project-id <id>", "--webhook-id <id>"]],
      [["remove"], ["--project-id <id>", "--webhook-id <id>"]],
      [["test"], ["--project-id <id>", "--webhook-id <id>", "--event-type <name>"]],
      [
        ["deliveries", "list"],
        ["--project-id <id>", "--webhook-id <id>", "--limit <n>"],
      ],
      [["deliveries", "show"], ["--delivery-id <id>"]],
      [["deliveries", "retry"], ["--delivery-id <id>"]],
    ];
    for (const [command, flags] of options) {
      const help = (await cli(["webhooks", ...command, "--help"])).stdout;
      for (const flag of flags) expect(help, command.join(" ")).toContain(flag);
      // Every subcommand's help shows how to reach the API.
      expect(help).toContain("--api-url <url>");
      expect(help).toContain("--json");
    }
  });

  it("documents the environment variables, the default address and the exit codes", async () => {
    const help = (await cli(["webhooks", "--help"])).stdout;
    for (const text of [
      "WEBHOOK_OPERATOR_URL",
      "WEBHOOK_OPERATOR_API_KEY",
      "WEBHOOK_SECRET",
      "http://127.0.0.1:8080",
    ]) {
      expect(help).toContain(text);
    }
    expect(help).toContain("Exit codes: 0 success, 1 API, network or delivery failure, 2 usage error.");
  });

  it("prints plain text: no colour escapes, even when FORCE_COLOR is set", async () => {
    const help = await cli(["webhooks", "create", "--help"], { env: { FORCE_COLOR: "1" } });
    const list = await cli(["webhooks", "list", "--project-id", String(projectId)], {
      env: { FORCE_COLOR: "1" },
    });
    expect(help.stdout + list.stdout).not.toContain("\u001b[");
  });
});

describe("usage errors exit 2 and print the command's usage", () => {
  it("without a command, at the root and in each group", async () => {
    expect(await fails(2, [])).toContain("Usage: webhook-operator [options] [command]");
    expect(await fails(2, ["hooks"])).toContain("Usage: webhook-operator webhooks|hooks [options] [command]");
    expect(await fails(2, ["hooks", "deliveries"])).toContain("Usage: webhook-operator webhooks deliveries");
  });

  it("for an unknown command", async () => {
    const stderr = await fails(2, ["webhooks", "lst"]);
    expect(stderr).toMatch(/^error: unknown command 'lst'\n\(Did you mean list\?\)/);
    expect(stderr).toContain("Usage: webhook-operator webhooks|hooks");
  });

  it.each([
    [["show", "--webhook-id", "1"], "error: required option '--project-id <id>' not specified", "show"],
    [["show", "--project-id", "1"], "error: required option '--webhook-id <id>' not specified", "show"],
    [
      ["create", "--project-id", "1", "--events", "all"],
      "error: required option '--url <url>' not specified",
      "create",
    ],
    [
      ["create", "--project-id", "1", "--url", "http://x.test"],
      "error: required option '--events <names>' not specified",
      "create",
    ],
    [
      ["deliveries", "show", "--project-id", "1", "--webhook-id", "1"],
      "error: required option '--delivery-id <id>' not specified",
      "deliveries show",
    ],
    [["list", "--project-id"], "error: option '--project-id <id>' argument missing", "list"],
    [["list", "--project-id", "1", "--bogus"], "error: unknown option '--bogus'", "list"],
    [
      ["list", "--project-id", "1", "extra"],
      "error: too many arguments for 'list'. Expected 0 arguments but got 1.",
      "list",
    ],
    [
      ["show", "--project-id", "abc", "--webhook-id", "1"],
      "error: option '--project-id <id>' argument 'abc' is invalid. It must be a positive integer.",
      "show",
    ],
    [
      ["deliveries", "list", "--project-id", "1", "--webhook-id", "1", "--limit", "0"],
      "error: option '--limit <n>' argument '0' is invalid. It must be a positive integer.",
      "deliveries list",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1", "--enabled", "yes"],
      "error: option '--enabled <true|false>' argument 'yes' is invalid. It must be 'true' or 'false'.",
      "update",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1", "--secret", "a", "--secret-stdin"],
      "error: option '--secret <value>' cannot be used with option '--secret-stdin'",
      "update",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1", "--remove-secret", "--secret", "a"],
      "error: option '--remove-secret' cannot be used with option '--secret <value>'",
      "update",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1"],
      "error: nothing to update: give --url, --url-secret, --events, --enabled, --secret, --secret-stdin, --remove-secret, --retry-max-attempts, --auto-disable, --rate-limit, --format, --cloudevents-mode, --signature-scheme, --template-file, --template-content-type, --header, --remove-headers, --rollout-details, --no-rollout-details, --selector, --environment, --kind or --remove-filters",
      "update",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1", "--retry-max-attempts", "never"],
      "error: option '--retry-max-attempts <n|off>' argument 'never' is invalid. It must be a number of attempts (1-6) or 'off'.",
      "update",
    ],
    [
      ["create", "--project-id", "1", "--url", "http://x.test", "--events", "all", "--auto-disable", "10"],
      "error: option '--auto-disable <failures:seconds|off>' argument '10' is invalid. It must be <failures>:<seconds>, such as 10:3600, or 'off'.",
      "create",
    ],
    [
      ["create", "--project-id", "1", "--url", "http://x.test", "--events", "all", "--rate-limit", "5"],
      "error: option '--rate-limit <per_second:burst|off>' argument '5' is invalid. It must be <per_second>:<burst>, such as 5:20, or 'off'.",
      "create",
    ],
    [
      ["update", "--project-id", "1", "--webhook-id", "1", "--secret", ""],
      "error: --secret is empty",
      "update",
    ],
    [
      ["create", "--project-id", "1", "--url", "http://x.test", "--events", "all", "--secret-stdin"],
      "error: the secret read from standard input is empty",
      "create",
    ],
  ])("webhooks %j", async (args, message, command) => {
    const stderr = await fails(2, ["webhooks", ...args]);
    expect(stderr.split("\n")[0]).toBe(message);
    expect(stderr).toContain(`Usage: webhook-operator webhooks ${command} [options]`);
  });

  it("when no API key is given, naming the flag and the environment variable", async () => {
    for (const key of [undefined, ""]) {
      const stderr = await fails(2, ["webhooks", "list", "--project-id", "1"], {
        env: { WEBHOOK_OPERATOR_API_KEY: key },
      });
      expect(stderr).toMatch(/^error: no API key: pass --api-key <key> or set WEBHOOK_OPERATOR_API_KEY\n/);
      expect(stderr).toContain("Usage: webhook-operator webhooks list [options]");
    }
  });

  it("when the API address is not an http(s) URL", async () => {
    const stderr = await fails(2, ["webhooks", "events"], {
      env: { WEBHOOK_OPERATOR_URL: "localhost:8080" },
    });
    expect(stderr).toMatch(
      /^error: --api-url \(or WEBHOOK_OPERATOR_URL\) must be an http:\/\/ or https:\/\/ URL/,
    );
  });
});

describe("API errors exit 1 with the server's message and status", () => {
  it("a wrong API key: 401", async () => {
    for (const options of [{ env: { WEBHOOK_OPERATOR_API_KEY: "wrong-key-0123456789" } }, undefined]) {
      const args = ["webhooks", "list", "--project-id", String(projectId)];
      const stderr = await fails(1, options ? args : [...args, "--api-key", "wrong-key-0123456789"], options);
      expect(stderr).toBe(
        "error: Invalid API key. (HTTP 401, unauthorized)\nCheck --api-key or WEBHOOK_OPERATOR_API_KEY.\n",
      );
    }
  });

  it("the --api-key and --api-url flags take precedence over the environment", async () => {
    const result = await cli(
      ["webhooks", "events", "--api-key", service.adminKey, "--api-url", service.baseUrl, "--json"],
      {
        env: {
          WEBHOOK_OPERATOR_API_KEY: "wrong-key-0123456789",
          WEBHOOK_OPERATOR_URL: await closedPortUrl(),
        },
      },
    );
    expect(result).toMatchObject({ code: 0, stderr: "" });
  });

  it("an unknown webhook, project or delivery: 404", async () => {
    expect(
      await fails(1, ["webhooks", "show", "--project-id", String(projectId), "--webhook-id", "999"]),
    ).toBe(`error: Webhook 999 not found in project ${projectId}. (HTTP 404, not_found)\n`);
    expect(await fails(1, ["hooks", "list", "--project-id", "999"])).toBe(
      "error: Project 999 not found. (HTTP 404, not_found)\n",
    );
    expect(await fails(1, ["hooks", "deliveries", "show", ...ids(), "--delivery-id", "999", "--json"])).toBe(
      `error: Delivery 999 not found for webhook ${webhookId}. Delivery records older than the retention period (RETENTION_DAYS) are removed. (HTTP 404, not_found)\n`,
    );
    for (const command of [["remove"], ["enable"], ["disable"], ["test"], ["deliveries", "list"]]) {
      const stderr = await fails(1, [
        "hooks",
        ...command,
        "--project-id",
        String(projectId),
        "--webhook-id",
        "999",
      ]);
      expect(stderr).toContain("(HTTP 404, not_found)");
    }
  });

  it("an unknown event name: the server's 400 lists the valid names", async () => {
    const stderr = await fails(1, ["webhooks", "update", ...ids(), "--events", "deployment.done"]);
    expect(stderr).toMatch(/^error: Invalid request: body\.events\.0: unknown event type "deployment\.done"/);
    expect(stderr).toContain("valid event types are: deployment.created, deployment.ready");
    expect(stderr).toMatch(/\(HTTP 400, validation_failed\)\n$/);
    const test = await fails(1, ["webhooks", "test", ...ids(), "--event-type", "project.created"]);
    expect(test).toContain("cannot be sent as a test event");
  });

  it("an invalid URL: the server's 400", async () => {
    const stderr = await fails(1, ["webhooks", "update", ...ids(), "--url", "ftp://example.com"]);
    expect(stderr).toBe(
      "error: Invalid request: body.url: url must be an absolute http:// or https:// URL without credentials (user:password@) or spaces (HTTP 400, validation_failed)\n",
    );
  });

  it("retrying a delivery of a disabled webhook: 409", async () => {
    // Nothing listens on port 9: the delivery fails at once, and is recorded.
    const created = await service.api("POST", `/projects/${projectId}/webhooks`, {
      body: { url: "http://127.0.0.1:9/hooks", events: ["deployment.ready"] },
    });
    const path = `/projects/${projectId}/webhooks/${created.body.id}`;
    await withTransaction(service.pool, (client) =>
      emitEvent(client, { eventType: "deployment.ready", projectId, payload: {} }),
    );
    const deliveryId = await waitUntil(
      "the first delivery's id",
      async () => (await service.api("GET", `${path}/deliveries`)).body[0]?.id,
    );
    await service.api("PUT", path, { body: { enabled: false } });
    const stderr = await fails(1, [
      "webhooks",
      "deliveries",
      "retry",
      "--project-id",
      String(projectId),
      "--webhook-id",
      String(created.body.id),
      "--delivery-id",
      String(deliveryId),
    ]);
    expect(stderr).toBe(
      `error: Webhook ${created.body.id} is disabled; enable it before retrying its deliveries. (HTTP 409, conflict)\n`,
    );
  });
});

describe("network errors exit 1 and name the address tried", () => {
  it("a closed port, from the environment or from --api-url", async () => {
    const url = await closedPortUrl();
    const expected =
      `error: Could not reach the API at ${url}: connection refused (ECONNREFUSED).\n` +
      "Is the service running there? Set the address with --api-url or WEBHOOK_OPERATOR_URL.\n";
    expect(await fails(1, ["webhooks", "events"], { env: { WEBHOOK_OPERATOR_URL: url } })).toBe(expected);
    expect(await fails(1, ["hooks", "list", "--project-id", "1", "--api-url", `${url}/`])).toBe(expected);
  });

  it("an unknown host", async () => {
    const stderr = await fails(1, ["webhooks", "events", "--api-url", "http://webhook-operator.invalid"]);
    expect(stderr).toMatch(/^error: Could not reach the API at http:\/\/webhook-operator\.invalid: /);
  });

  it("the default address when WEBHOOK_OPERATOR_URL is not set", async (context) => {
    const free = createServer();
    const listening = await new Promise<boolean>((resolve) => {
      free.once("error", () => resolve(false));
      free.listen(8080, "127.0.0.1", () => resolve(true));
    });
    if (!listening) context.skip("something listens on 127.0.0.1:8080");
    await new Promise((resolve) => free.close(resolve));
    const stderr = await fails(1, ["webhooks", "events"], { env: { WEBHOOK_OPERATOR_URL: undefined } });
    expect(stderr).toMatch(
      /^error: Could not reach the API at http:\/\/127\.0\.0\.1:8080: connection refused/,
    );
  });
});

describe("the API client the commands share", () => {
  it("turns an error answer into ApiClientError and no answer into ApiNetworkError", async () => {
    const wrongKey = new ApiClient({ baseUrl: service.baseUrl, apiKey: "wrong-key-0123456789" });
    await expect(wrongKey.listEventTypes()).rejects.toMatchObject({
      constructor: ApiClientError,
      status: 401,
      code: "unauthorized",
      message: "Invalid API key.",
    });
    const client = new ApiClient({ baseUrl: service.baseUrl, apiKey: service.adminKey });
    const invalid = await client
      .createWebhook(projectId, { url: "nope", events: [] })
      .catch((error) => error);
    expect(invalid).toBeInstanceOf(ApiClientError);
    expect(invalid.details.map((detail: { path: string }) => detail.path)).toEqual([
      "body.url",
      "body.events",
    ]);
    const url = await closedPortUrl();
    const unreachable = new ApiClient({ baseUrl: url, apiKey: service.adminKey });
    await expect(unreachable.listProjects()).rejects.toMatchObject({
      constructor: ApiNetworkError,
      baseUrl: url,
      message: `Could not reach the API at ${url}: connection refused (ECONNREFUSED).`,
    });
  });
});
