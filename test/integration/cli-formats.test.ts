import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { docBlock, docSection } from "../support/docs.js";
import { startTestService, type TestService } from "../support/service.js";
import { repoRoot } from "../support/tools.js";

// The CLI's format options (--format, --cloudevents-mode, --signature-scheme, --template-file,
// --template-content-type, --header, --remove-headers), run as users run the built binary.

let service: TestService;
let projectId: number;

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  projectId = await createProject(service, "shop", "Shop");
});
afterAll(() => service?.close());

async function cliJson(args: string[]) {
  const result = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [...args, "--json"]);
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(result.stdout);
}

describe("webhooks create and update with format options", () => {
  it("sends each option as its API field; header values are sent but never printed", async () => {
    const templateFile = path.join(tmpdir(), `wo-template-${process.pid}.liquid`);
    await writeFile(templateFile, '{"text": "{{ event.event_type }}"}\n');
    const args = ["--project-id", String(projectId)];
    const created = await cliJson([
      "webhooks",
      "create",
      ...args,
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      "--format",
      "cloudevents",
      "--cloudevents-mode",
      "binary",
      "--signature-scheme",
      "standard-webhooks",
      "--secret",
      "whsec-cli",
      "--header",
      "Authorization=Bearer a=b-token",
      "--header",
      "X-Api-Key=k1",
    ]);
    expect(created).toMatchObject({
      format: "cloudevents",
      cloudevents_mode: "binary",
      signature_scheme: "standard-webhooks",
      header_names: ["Authorization", "X-Api-Key"],
    });
    expect(JSON.stringify(created)).not.toContain("a=b-token");

    const updated = await cliJson([
      "webhooks",
      "update",
      ...args,
      "--webhook-id",
      String(created.id),
      "--format",
      "template",
      "--template-file",
      templateFile,
      "--template-content-type",
      "text/plain",
      "--remove-headers",
    ]);
    expect(updated).toMatchObject({
      format: "template",
      template: '{"text": "{{ event.event_type }}"}\n',
      template_content_type: "text/plain",
      header_names: [],
    });

    const shown = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "webhooks",
      "show",
      ...args,
      "--webhook-id",
      String(created.id),
    ]);
    expect(shown.stdout).toMatch(/^format: +template, text\/plain$/m);
    expect(shown.stdout).toMatch(/^signature: +standard-webhooks$/m);
    // One line ended by a line feed is one line.
    expect(shown.stdout).toMatch(/^template: +1 line; see --json$/m);

    const listed = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "webhooks",
      "list",
      ...args,
    ]);
    const [header, ...rows] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+URL\s+EVENTS\s+FORMAT\s+ENABLED\s+HAS_SECRET\s+RETRIES\s+UPDATED_AT$/);
    expect(rows.find((row) => row.startsWith(`${created.id} `))).toMatch(
      /^\d+\s+https:\/\/example\.com\/hook\s+deployment\.succeeded\s+template\s+true\s+true\s/,
    );
  });

  it("refuses --format template without --template-file, naming the flag (exit 2, nothing created)", async () => {
    const before = (await service.api("GET", `/projects/${projectId}/webhooks`)).body.length;
    const result = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      "--format",
      "template",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: --format template needs --template-file <path>");
    expect(result.stderr).not.toContain("body.template");
    expect((await service.api("GET", `/projects/${projectId}/webhooks`)).body.length).toBe(before);
  });

  it("previews a webhook's request: headers in send order and the body, sending nothing", async () => {
    const templateFile = path.join(tmpdir(), `wo-preview-${process.pid}.liquid`);
    await writeFile(templateFile, '{"text": "{{ event.event_type }} in {{ event.payload.environment }}"}');
    const created = await cliJson([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/preview",
      "--events",
      "deployment.failed",
      "--format",
      "template",
      "--template-file",
      templateFile,
      "--header",
      "Authorization=Bearer preview-token",
    ]);
    const ref = ["--project-id", String(projectId), "--webhook-id", String(created.id)];
    const api = await service.api("POST", `/projects/${projectId}/webhooks/${created.id}/preview`, {
      body: { event_type: "deployment.failed" },
    });
    const asJson = await cliJson(["webhooks", "preview", ...ref, "--event-type", "deployment.failed"]);
    expect(Object.keys(asJson)).toEqual(Object.keys(api.body));
    expect(asJson.body).toBe(api.body.body);
    const text = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "hooks",
      "preview",
      ...ref,
      "--event-type",
      "deployment.failed",
    ]);
    expect(text).toMatchObject({ code: 0, stderr: "" });
    expect(text.stdout).toMatch(/^event_type: +deployment\.failed\ncontent_type: +application\/json\n/);
    const headerLines = text.stdout.split("request_headers:\n")[1]?.split("\n\n")[0]?.split("\n") ?? [];
    expect(headerLines.map((line) => line.split(": ")[0])).toEqual(Object.keys(api.body.headers));
    expect(headerLines).toContain("Authorization: ********");
    expect(text.stdout).toContain(`body:\n${api.body.body}\n`);
    expect(text.stdout).not.toContain("preview-token");
    const deliveries = await service.api("GET", `/projects/${projectId}/webhooks/${created.id}/deliveries`);
    expect(deliveries.body.data ?? deliveries.body).toEqual([]);
  });

  it("prints what docs/cli.md shows for a Slack webhook (the example event's id and times aside)", async () => {
    const { text } = docSection("# Command-line client");
    const [, command, shown] =
      /```console\n\$ npx webhook-operator (hooks preview [^\n]+)\n([\s\S]*?)```/.exec(text) ?? [];
    expect(command).toBe("hooks preview --project-id 1 --webhook-id 3 --event-type deployment.failed");
    const slack = await cliJson([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://hooks.slack.example/services/T0/B0/x",
      "--events",
      "deployment.failed",
      "--format",
      "slack",
      "--header",
      "Authorization=Bearer preview-token",
    ]);
    const args = (command as string)
      .split(" ")
      .map((word, i, words) =>
        words[i - 1] === "--project-id"
          ? String(projectId)
          : words[i - 1] === "--webhook-id"
            ? String(slack.id)
            : word,
      );
    const printed = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, args);
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    // The example event is new each time: its timestamp, id and times are the example's own.
    const stable = (output: string) =>
      output
        .replace(/^X-Webhook-Timestamp: \d+$/m, "X-Webhook-Timestamp: <now>")
        .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/g, "<time>")
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<event id>");
    expect(stable(printed.stdout)).toBe(stable(shown as string));
  });

  it("exits 1 with the reason when the format cannot render the event", async () => {
    const created = await cliJson([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/unrenderable",
      "--events",
      "deployment.succeeded",
    ]);
    // A future format, as a newer replica may have written it: the preview says why it cannot render.
    await service.pool.query("UPDATE webhooks SET format = 'future-format' WHERE id = $1", [created.id]);
    const result = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "hooks",
      "preview",
      "--project-id",
      String(projectId),
      "--webhook-id",
      String(created.id),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^error: +unknown format "future-format"$/m);
    expect(result.stderr).toBe(
      'error: the webhook\'s format cannot render this event: unknown format "future-format"\n',
    );
  });

  it("says on every filter option of update that they replace all the webhook's filters", async () => {
    const help = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "hooks",
      "update",
      "--help",
    ]);
    const flat = help.stdout.replace(/\s+/g, " ");
    for (const option of ["--selector <selector>", "--environment <names>", "--kind <kinds>"]) {
      const described = flat.slice(
        flat.indexOf(option),
        flat.indexOf(" --", flat.indexOf(option) + option.length),
      );
      expect(described).toContain("the filter options replace all the webhook's filters");
    }
  });

  it("keeps a chat URL secret with --url-secret: list and show print it masked", async () => {
    const created = await cliJson([
      "hooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://hooks.slack.example/services/T0/B0/cliSecretToken",
      "--url-secret",
      "--events",
      "deployment.succeeded",
      "--format",
      "slack",
    ]);
    expect(created).toMatchObject({ url: "https://hooks.slack.example/********", url_secret: true });
    for (const command of [["list"], ["show", "--webhook-id", String(created.id)]]) {
      const printed = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
        "hooks",
        ...command,
        "--project-id",
        String(projectId),
      ]);
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain("https://hooks.slack.example/********");
      expect(printed.stdout).not.toContain("cliSecretToken");
    }
  });

  it("turns rollout details on with --rollout-details and off with --no-rollout-details", async () => {
    const created = await cliJson([
      "hooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/rollouts",
      "--events",
      "deployment.failed",
      "--rollout-details",
    ]);
    expect(created.rollout_details).toBe(true);
    const ref = ["--project-id", String(projectId), "--webhook-id", String(created.id)];
    const off = await cliJson(["hooks", "update", ...ref, "--no-rollout-details"]);
    expect(off).not.toHaveProperty("rollout_details");
    const on = await cliJson(["hooks", "update", ...ref, "--rollout-details"]);
    expect(on.rollout_details).toBe(true);
  });

  it("refuses a header without = as a usage error (exit 2)", async () => {
    const result = await runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      "--header",
      "Authorization",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Name=value/);
  });
});

describe("docs/formats.md, From the command line", () => {
  it("runs as written: a CloudEvents webhook with Standard Webhooks and a header, then a template, then no headers", async () => {
    const block = docBlock("## From the command line");
    const split = block.indexOf("\nnpx webhook-operator webhooks update");
    const [create, updates] = [block.slice(0, split), block.slice(split)];
    const project = await createProject(service, "formats-cli", "Formats CLI");
    // npx finds the binary from the checkout, so the lines run there, with the template file's path.
    const template = path.join(await mkdtemp(path.join(tmpdir(), "wo-formats-cli-")), "deploy.liquid");
    await writeFile(template, "{{ event.event_type }} of {{ payload.project_name }}\n");
    const run = (script: string) =>
      promisify(execFile)(
        "bash",
        ["-c", `set -euo pipefail\n${script.replaceAll("--project-id 4", `--project-id ${project}`)}`],
        {
          cwd: repoRoot,
          timeout: 60_000,
          env: {
            PATH: `${path.join(repoRoot, "node_modules/.bin")}:${process.env.PATH}`,
            HOME: process.env.HOME ?? "/tmp",
            WEBHOOK_OPERATOR_URL: service.baseUrl,
            WEBHOOK_OPERATOR_API_KEY: service.adminKey,
            SIGNING_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            EVENTS_TOKEN: "events-token-1",
          },
        },
      );
    const created = await run(create);
    const id = /^id: +(\d+)$/m.exec(created.stdout)?.[1];
    expect(id, created.stdout).toBeDefined();
    const first = await service.api("GET", `/projects/${project}/webhooks/${id}`);
    expect(first.body).toMatchObject({
      format: "cloudevents",
      cloudevents_mode: "binary",
      header_names: ["Authorization"],
    });
    await run(updates.replaceAll("--webhook-id 9", `--webhook-id ${id}`).replace("deploy.liquid", template));
    const webhook = await service.api("GET", `/projects/${project}/webhooks/${id}`);
    expect(webhook.body).toMatchObject({
      url: "https://events.example.com/",
      format: "template",
      signature_scheme: "standard-webhooks",
      has_secret: true,
      template: "{{ event.event_type }} of {{ payload.project_name }}\n",
      template_content_type: "text/plain; charset=utf-8",
      header_names: [],
    });
  }, 120_000); // three `npx` starts: slow on a busy machine
});
