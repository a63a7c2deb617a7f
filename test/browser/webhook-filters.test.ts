import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";

// The webhook form's filters against the real service: a selector in kubectl's syntax, environments
// and kinds are saved as the webhook's filters and shown on its page; a selector that does not read
// is reported at the field before anything is sent; emptied, the filters are removed.

let world: DashboardWorld;
let projectId: number;

beforeAll(async () => {
  world = await startDashboardWorld();
  projectId = await createProject(world.service, "filtered", "Filtered");
});
afterAll(async () => {
  await world?.close();
});

it("adds a webhook with filters, shows them, and removes them when emptied", async () => {
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${world.service.baseUrl}/projects/${projectId}/settings/webhooks/new`);
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/filtered`);
  await page.getByRole("checkbox", { name: "All events" }).check();
  await page.getByLabel("Workload labels").fill("tier in web");
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.getByText("is not a selector term").waitFor();

  await page.getByLabel("Workload labels").fill("app=payments, tier in (web,api),!canary");
  await page.getByLabel("Environments").fill("production, staging");
  await page.getByRole("checkbox", { name: "StatefulSet" }).check();
  await page.getByRole("checkbox", { name: "Deployment", exact: true }).check();
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.getByRole("heading", { name: `${world.receiver.url}/filtered` }).waitFor();

  const summary = page.getByRole("region", { name: "Filters" });
  expect(await summary.innerText()).toMatch(/app=payments,tier in \(web,api\),!canary/);
  expect(await summary.innerText()).toContain("production, staging");
  expect(await summary.innerText()).toContain("Deployment, StatefulSet");
  const listed = await world.service.api("GET", `/projects/${projectId}/webhooks`);
  expect(listed.body[0].filters).toEqual({
    label_selector: {
      match_labels: { app: "payments" },
      match_expressions: [
        { key: "tier", operator: "In", values: ["web", "api"] },
        { key: "canary", operator: "DoesNotExist" },
      ],
    },
    environments: ["production", "staging"],
    kinds: ["Deployment", "StatefulSet"],
  });
  if (process.env.FILTERS_SCREENSHOT)
    await page.screenshot({ path: process.env.FILTERS_SCREENSHOT, fullPage: true });

  await page.getByRole("link", { name: "Edit" }).click();
  await page.getByLabel("Workload labels").waitFor();
  expect(await page.getByLabel("Workload labels").inputValue()).toBe(
    "app=payments,tier in (web,api),!canary",
  );
  if (process.env.FILTERS_SCREENSHOT) {
    await page.getByRole("group", { name: "Filters" }).screenshot({
      path: process.env.FILTERS_SCREENSHOT.replace(/\.png$/, "-form.png"),
    });
  }
  await page.getByLabel("Workload labels").fill("");
  await page.getByLabel("Environments").fill("");
  await page.getByRole("checkbox", { name: "StatefulSet" }).uncheck();
  await page.getByRole("checkbox", { name: "Deployment", exact: true }).uncheck();
  await page.getByRole("button", { name: "Save changes" }).click();
  await summary.getByText("None: every subscribed event").waitFor();
  const after = await world.service.api("GET", `/projects/${projectId}/webhooks`);
  expect(after.body[0]).not.toHaveProperty("filters");
});

it("checks an example workload against the webhook's filters on its page, saying why not", async () => {
  const created = await world.service.api("POST", `/projects/${projectId}/webhooks`, {
    body: {
      url: `${world.receiver.url}/checked`,
      events: ["deployment.succeeded"],
      filters: { environments: ["production"], label_selector: { match_labels: { app: "payments" } } },
    },
  });
  expect(created.status).toBe(201);
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${world.service.baseUrl}/projects/${projectId}/settings/webhooks/${created.body.id}`);
  const card = page.getByRole("region", { name: "Check an event" });
  await card.getByLabel("Event type").selectOption("deployment.succeeded");
  await card.getByLabel("Workload kind").selectOption("Deployment");
  await card.getByLabel("Workload labels").fill("app=shop");
  await card.getByLabel("Environment").fill("staging");
  await card.getByRole("button", { name: "Check" }).click();
  await card.getByText("Would not be delivered:").waitFor();
  const reasons = await card.getByRole("listitem").allInnerTexts();
  expect(reasons).toEqual([
    'environment "staging" is not one of: production',
    'label app must be "payments": it is "shop"',
  ]);

  await card.getByLabel("Workload labels").fill("app=payments");
  await card.getByLabel("Environment").fill("production");
  await card.getByRole("button", { name: "Check" }).click();
  await card.getByText("Would be delivered.").waitFor();
  expect(world.receiver.requests.filter((r) => r.path === "/checked")).toEqual([]);
});
