import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { startTestService, type TestService } from "../support/service.js";

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
    expect(shown.stdout).toMatch(/^template: +2 line\(s\); see --json$/m);
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
