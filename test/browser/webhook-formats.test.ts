import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";

// The webhook form's format fields against the real service: the format, custom headers (write-only),
// a template with its live preview, and the Teams card drawn by the Adaptive Cards SDK under the page's
// own Content-Security-Policy.
//
// These need the service's side of delivery formats (the webhook's format fields and the preview
// operation, POST /api/projects/{p}/webhooks/preview), which is built beside the dashboard's side: on
// a service without them the API refuses the fields (400) and the preview answers 404, and the form
// says "Preview unavailable". They are kept apart from webhooks.test.ts for that reason.

let world: DashboardWorld;
let projectId: number;

beforeAll(async () => {
  world = await startDashboardWorld();
  projectId = await createProject(world.service, "formats", "Formats");
});

afterAll(async () => {
  await world?.close();
});

const webhooksUrl = () => `${world.service.baseUrl}/projects/${projectId}/settings/webhooks`;

/** A signed-in page that records every Content-Security-Policy violation the browser reports. */
async function formPage(path: string): Promise<{ page: Page; cspViolations: string[] }> {
  const page = await world.newPage();
  const cspViolations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}${path}`);
  return { page, cspViolations };
}

const preview = (page: Page) => page.getByRole("region", { name: "Preview" });

it("adds a Slack webhook with a custom header; the value is never shown again", async () => {
  const { page } = await formPage("/new");
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/slack`);
  await page.getByRole("checkbox", { name: "All events" }).check();
  await page.getByLabel("Body format").selectOption("slack");
  await page.getByRole("button", { name: "Add header" }).click();
  await page.getByLabel("Header 1 name").fill("Authorization");
  await page.getByLabel("Header 1 value").fill("Bearer s3cret-token");
  // The preview masks the value and shows the body the service would send.
  const headers = preview(page).getByRole("table", { name: "Preview headers" });
  await headers.getByText("********").waitFor();
  expect(await headers.innerText()).toContain("Authorization");
  expect(await preview(page).innerText()).not.toContain("s3cret-token");
  await page.getByRole("button", { name: "Add webhook" }).click();

  await page.getByRole("heading", { name: `${world.receiver.url}/slack` }).waitFor();
  const format = page.getByRole("region", { name: "Format" });
  expect(await format.innerText()).toContain("Slack");
  expect(await format.innerText()).toContain("Authorization");
  const { body: webhooks } = await world.service.api("GET", `/projects/${projectId}/webhooks`);
  const saved = webhooks.find((w: { url: string }) => w.url.endsWith("/slack"));
  expect(saved).toMatchObject({ format: "slack", header_names: ["Authorization"] });
  expect(JSON.stringify(saved)).not.toContain("s3cret-token");

  // Edit: the headers are kept unless replaced or removed, and their values are not in the page.
  await page.getByRole("link", { name: "Edit", exact: true }).click();
  await page.getByText("Keep them as they are").waitFor();
  expect(await page.content()).not.toContain("s3cret-token");
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/slack-2`);
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByRole("heading", { name: `${world.receiver.url}/slack-2` }).waitFor();
  expect((await world.service.api("GET", `/projects/${projectId}/webhooks/${saved.id}`)).body).toMatchObject({
    format: "slack",
    header_names: ["Authorization"],
  });
});

it("previews a template as it is typed, and shows a template's error in place of the body", async () => {
  const { page } = await formPage("/new");
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/template`);
  await page.getByLabel("Body format").selectOption("template");
  await page.getByLabel("Content type").fill("text/plain");
  await page.getByLabel("Template").fill("Rolled out: {{ event.event_type }}");
  await preview(page).getByText("Rolled out: deployment.succeeded").waitFor();
  expect(await preview(page).innerText()).toContain("text/plain");
  // The Content-Type is one of the headers as sent, shown once.
  expect((await preview(page).innerText()).match(/Content-Type/g)).toHaveLength(1);

  await preview(page).getByLabel("Event").selectOption("deployment.failed");
  await preview(page).getByText("Rolled out: deployment.failed").waitFor();

  await page.getByLabel("Template").fill("{% if %}");
  await preview(page)
    .getByText(/Line 1:/)
    .waitFor();
  expect(await preview(page).innerText()).not.toContain("Rolled out");
});

it("draws the Teams card with the Adaptive Cards SDK, without breaking the page's CSP", async () => {
  const { page, cspViolations } = await formPage("/new");
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/teams`);
  await page.getByLabel("Body format").selectOption("msteams");
  const card = page.getByTestId("teams-card").locator(".ac-adaptiveCard");
  await card.waitFor();
  expect((await card.innerText()).length).toBeGreaterThan(0);
  expect(await page.getByText("The card could not be drawn").count()).toBe(0);
  expect(cspViolations).toEqual([]);
});

it("keeps a webhook's format when only its URL is edited, and resets a template when the format changes", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/kept`,
    events: ["deployment.failed"],
    format: "template",
    template: "{{ event.event_type }}",
    template_content_type: "text/plain",
    headers: { "X-Api-Key": "k3y-value" },
  });
  const { page } = await formPage(`/${id}/edit`);
  expect(await page.getByLabel("Body format").inputValue()).toBe("template");
  expect(await page.getByLabel("Template").inputValue()).toBe("{{ event.event_type }}");
  await page.getByLabel("Body format").selectOption("cloudevents");
  await page.getByRole("radio", { name: /Binary mode/ }).check();
  await page.getByRole("radio", { name: "Remove them" }).check();
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("CloudEvents (binary mode)").waitFor();
  const { body } = await world.service.api("GET", `/projects/${projectId}/webhooks/${id}`);
  expect(body).toMatchObject({
    format: "cloudevents",
    cloudevents_mode: "binary",
    template: null,
    header_names: [],
  });
});
