import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { insertDeliveryHistory } from "../support/dashboard-data.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";

// What a first look at the dashboard found wanting: the replayed attempt linked, a delivery's duration,
// a health chart with a y scale, dates and text as large as the page's, only the retry waits that apply,
// whole event ids on a phone, no namespaces without a cluster, and "required" for an empty URL.

let world: DashboardWorld;
let projectId: number;
beforeAll(async () => {
  world = await startDashboardWorld();
  projectId = await createProject(world.service, "storefront", "Storefront");
});
afterAll(() => world?.close());

const webhooks = () => `${world.service.baseUrl}/projects/${projectId}/settings/webhooks`;

it("links a replay's new attempt, whose page shows how long it took", async () => {
  world.receiver.on("/replayed", (_request, res) => res.writeHead(200).end("ok"));
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/replayed`,
    events: ["deployment.failed"],
  });
  const sent = await world.service.api("POST", `/projects/${projectId}/webhooks/${id}/test`);
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooks()}/${id}/deliveries/${sent.body.delivery_id}`);
  await page.getByRole("button", { name: "Replay" }).click();
  const link = page.locator(".replay-result").getByRole("link");
  await link.waitFor();
  const [newest] = (await world.service.api("GET", `/projects/${projectId}/webhooks/${id}/deliveries`)).body;
  expect(await link.innerText()).toBe(`Open delivery ${newest.id}`);

  await link.click();
  await page.getByRole("heading", { name: `Delivery ${newest.id}` }).waitFor();
  expect(await page.locator(".fact", { hasText: "Attempt" }).locator("dd").innerText()).toBe("2");
  // The replay's own result is not carried over to the new attempt's page.
  expect(await page.locator(".replay-result").innerText()).toBe("");
  const duration = await page.locator(".fact", { hasText: "Duration" }).locator("dd").innerText();
  expect(duration).toBe(`${newest.duration_ms} ms`);
});

it("draws delivery health with a y scale, dates and readable labels, in a card without empty space", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/health`,
    events: ["deployment.failed"],
  });
  const history = Array.from({ length: 12 }, (_, i) => ({ hoursAgo: i * 2 + 0.5, success: i % 4 !== 0 }));
  await insertDeliveryHistory(world.service.pool, id, projectId, history);
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooks()}/${id}`);
  const card = page.locator("section[aria-labelledby=health-title]");
  const labels = card.locator("svg text");
  await labels.first().waitFor();
  // y scale: each bucket holds at most one attempt here, so the scale is 0, 1, 2.
  expect(await card.locator(".chart-y").allTextContents()).toEqual(["0", "1", "2"]);
  // x: every sixth hour, and the date under the first one and wherever the day changes.
  const hours = await card.locator(".chart-x").allTextContents();
  expect(hours).toHaveLength(4);
  for (const hour of hours) expect(hour).toMatch(/^\d\d:00$/);
  const dates = await card.locator(".chart-date").allTextContents();
  expect(dates.length).toBeGreaterThanOrEqual(1);
  for (const date of dates) expect(date).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
  const smallest = Math.min(
    ...(await labels.evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().height))),
  );
  expect(smallest).toBeGreaterThanOrEqual(12);
  // Below the chart, only the card's padding (1.1rem), not the ~150 px a stretched card had.
  const gap = await card.evaluate(
    (section) =>
      section.getBoundingClientRect().bottom -
      (section.querySelector("svg")?.getBoundingClientRect().bottom ?? 0),
  );
  expect(gap).toBeLessThan(32);

  // 30 days: one bucket per day, labelled with dates every week.
  await card.getByRole("button", { name: "30 days" }).click();
  await expect.poll(() => card.locator("svg title").count()).toBe(30);
  const days = await card.locator(".chart-x").allTextContents();
  expect(days).toHaveLength(5);
  for (const day of days) expect(day).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
});

it("lists only the retry waits that apply, here and in the form", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/retries`,
    events: ["deployment.failed"],
    retry_policy: { max_attempts: 3 },
  });
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooks()}/${id}`);
  const policy = page.locator(".fact", { hasText: "Automatic retries" }).locator("dd");
  await expect.poll(() => policy.innerText()).toBe("Up to 3 attempts per event: retries after 5 s and 1 min");
  await page.goto(`${webhooks()}/${id}/edit`);
  await page.getByText("Retries wait 5 s and 1 min; each is a new delivery record.").waitFor();
  await page.getByLabel("Automatic retries").selectOption("2");
  await page.getByText("Retries wait 5 s; each is a new delivery record.").waitFor();
});

it("shows whole event ids on a phone", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/ids`,
    events: ["deployment.failed"],
  });
  // Two events a millisecond apart: UUIDv7 ids that share their first eleven characters.
  await insertDeliveryHistory(world.service.pool, id, projectId, [
    { hoursAgo: 1, success: true },
    { hoursAgo: 1 + 1 / 3_600_000, success: true },
  ]);
  const page = await world.newPage();
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooks()}/${id}`);
  const cells = page.locator("td[data-label='Event id']");
  await expect.poll(() => cells.count()).toBe(2);
  const records = (await world.service.api("GET", `/projects/${projectId}/webhooks/${id}/deliveries`)).body;
  expect(await cells.allTextContents()).toEqual(records.map((r: { event_id: string }) => r.event_id));
  for (const cell of await cells.all()) {
    expect(await cell.evaluate((td) => td.scrollWidth <= td.clientWidth)).toBe(true);
  }
});

it("speaks of no namespace or cluster without one, and says an empty URL is required", async () => {
  const empty = await createProject(world.service, "empty", "Empty");
  const { id } = await createWebhook(world.service, empty, {
    url: `${world.receiver.url}/standalone`,
    events: ["deployment.failed"],
  });
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.getByText("Choose a project to manage its webhooks.").waitFor();
  const pages = [`/projects/${empty}/settings/webhooks/${id}`, `/projects/${empty}/settings/webhooks/new`];
  for (const path of ["/projects", ...pages]) {
    await page.goto(`${world.service.baseUrl}${path}`);
    await page.waitForLoadState("networkidle");
    expect(await page.locator("main").innerText()).not.toMatch(/namespace|cluster/i);
  }
  await page.getByText("Use https:// for receivers on other machines.").waitFor();
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.locator("#url-error").getByText("url is required").waitFor();
});
