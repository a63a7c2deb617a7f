import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { startTestService, type TestService } from "../support/service.js";

// The CLI's filter options (-l/--selector in kubectl's syntax, --environment, --kind, --remove-filters),
// run as users run the built binary.

let service: TestService;
let projectId: number;

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  projectId = await createProject(service, "filtered", "Filtered");
});
afterAll(() => service?.close());

const cli = (args: string[]) => runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, args);
async function cliJson(args: string[]) {
  const result = await cli([...args, "--json"]);
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(result.stdout);
}

describe("webhooks create and update with filter options", () => {
  it("sends the selector, environments and kinds as filters, shows them in one line, replaces and removes them", async () => {
    const ids = ["--project-id", String(projectId)];
    const created = await cliJson([
      "webhooks",
      "create",
      ...ids,
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      "-l",
      "app=payments, tier in (web,api),release!=beta,!canary,team",
      "--environment",
      "production,staging",
      "--kind",
      "Deployment",
    ]);
    expect(created.filters).toEqual({
      label_selector: {
        match_labels: { app: "payments" },
        match_expressions: [
          { key: "tier", operator: "In", values: ["web", "api"] },
          { key: "release", operator: "NotIn", values: ["beta"] },
          { key: "canary", operator: "DoesNotExist" },
          { key: "team", operator: "Exists" },
        ],
      },
      environments: ["production", "staging"],
      kinds: ["Deployment"],
    });
    const webhook = [...ids, "--webhook-id", String(created.id)];
    const shown = await cli(["webhooks", "show", ...webhook]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /^filters: +labels app=payments,tier in \(web,api\),release notin \(beta\),!canary,team; environments production,staging; kinds Deployment$/m,
    );

    const replaced = await cliJson(["webhooks", "update", ...webhook, "--kind", "StatefulSet,DaemonSet"]);
    expect(replaced.filters).toEqual({ kinds: ["StatefulSet", "DaemonSet"] });
    const removed = await cliJson(["webhooks", "update", ...webhook, "--remove-filters"]);
    expect(removed).not.toHaveProperty("filters");
    const plain = await cli(["webhooks", "show", ...webhook]);
    expect(plain.stdout).not.toContain("filters");
  });

  it.each([
    [["-l", "tier in web"], "is not a selector term"],
    [["-l", "app=a,app=b"], "The label app is given twice"],
  ])("refuses a bad selector %j as a usage error (exit 2), sending nothing", async (options, message) => {
    const result = await cli([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      ...options,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it("passes the server's 400 on for a kind it does not know (exit 1)", async () => {
    const result = await cli([
      "webhooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/hook",
      "--events",
      "deployment.succeeded",
      "--kind",
      "Pod",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("filters.kinds must be one of: Deployment, StatefulSet, DaemonSet");
  });
});

describe("hooks preview with an example workload", () => {
  it("says whether the webhook would get the workload's event and why not, then the request", async () => {
    const webhook = await cliJson([
      "hooks",
      "create",
      "--project-id",
      String(projectId),
      "--url",
      "https://example.com/checked",
      "--events",
      "deployment.succeeded",
      "-l",
      "app=payments",
      "--environment",
      "production",
    ]);
    const ref = ["--project-id", String(projectId), "--webhook-id", String(webhook.id)];
    const refused = await cli([
      "hooks",
      "preview",
      ...ref,
      "--labels",
      "app=shop,tier=web",
      "--environment",
      "staging",
    ]);
    expect(refused).toMatchObject({ code: 0, stderr: "" });
    expect(refused.stdout).toMatch(
      /^would_deliver: false\nreasons: +environment "staging" is not one of: production\n +label app must be "payments": it is "shop"\n/,
    );
    expect(refused.stdout).toContain("\nrequest_headers:\n");

    const both = await cliJson([
      "hooks",
      "preview",
      ...ref,
      "--labels",
      "app=payments",
      "--environment",
      "production",
    ]);
    const api = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/filter-check`, {
      body: { workload: { labels: { app: "payments" }, environment: "production" } },
    });
    expect(both.filter_check).toEqual(api.body);
    expect(both.filter_check).toEqual({
      event_type: "deployment.succeeded",
      would_deliver: true,
      reasons: [],
    });
    expect(Object.keys(both.preview)).toEqual(["event_type", "content_type", "headers", "body"]);

    const bad = await cli(["hooks", "preview", ...ref, "--labels", "app"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"app" is not key=value.');
  });
});
