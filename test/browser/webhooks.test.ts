import { afterAll, beforeAll, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { insertDeliveryHistory } from "../support/dashboard-data.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";
import { waitUntil } from "../support/wait.js";

// Forms and lists: the API's field errors beside their fields, edit / disable / delete, paging past
// 100 deliveries, and a deep link that survives a reload.

let world: DashboardWorld;
let projectId: number;

beforeAll(async () => {
  world = await startDashboardWorld();
  projectId = await createProject(world.service, "storefront", "Storefront");
});

afterAll(async () => {
  await world?.close();
});

const webhooksUrl = () => `${world.service.baseUrl}/projects/${projectId}/settings/webhooks`;

it("shows the API's 400 details next to the fields they concern, and creates nothing", async () => {
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/new`);
  await page.getByLabel("Payload URL").fill("ftp://example.com/hook");
  await page.getByRole("button", { name: "Add webhook" }).click();

  const url = page.getByLabel("Payload URL");
  await page.getByText("url must be an absolute http:// or https:// URL").waitFor();
  expect(await url.getAttribute("aria-invalid")).toBe("true");
  const describedBy = (await url.getAttribute("aria-describedby")) ?? "";
  expect(await page.locator(`[id="${describedBy}"]`).innerText()).toContain("url must be an absolute");
  const events = page.getByRole("group", { name: "Events" });
  expect(await events.innerText()).toContain("events must name at least one event type");
  await page.getByRole("alert").getByText("The webhook was not saved").waitFor();
  expect((await world.service.api("GET", `/projects/${projectId}/webhooks`)).body).toEqual([]);
});

it("edits, disables and deletes a webhook, the deletion confirmed by a dialog naming its URL", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/edit-me`,
    events: ["deployment.failed"],
    secret: "s3cret-value",
  });
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/${id}`);
  await page.getByRole("link", { name: "Edit", exact: true }).click();
  await page.getByText("Currently: set").waitFor();
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/edited`);
  await page.getByRole("checkbox", { name: "All events" }).check();
  await page.getByRole("radio", { name: /Remove it/ }).check();
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByRole("heading", { name: `${world.receiver.url}/edited` }).waitFor();
  await page.getByText("All events ·").waitFor();
  const edited = (await world.service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body;
  expect(edited).toMatchObject({ url: `${world.receiver.url}/edited`, has_secret: false });
  expect(edited.events).toHaveLength(12);

  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByRole("button", { name: "Enable" }).waitFor();
  expect((await world.service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body.enabled).toBe(false);

  await page.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Delete this webhook?" });
  expect(await dialog.innerText()).toContain(`${world.receiver.url}/edited`);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  expect((await world.service.api("GET", `/projects/${projectId}/webhooks/${id}`)).status).toBe(200);
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await dialog.getByRole("button", { name: "Delete webhook" }).click();
  await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();
  expect((await world.service.api("GET", `/projects/${projectId}/webhooks/${id}`)).status).toBe(404);
});

it("sets retries and auto-disable in the form, and shows an automatic disable until the webhook is enabled", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/policy`,
    events: ["deployment.failed"],
  });
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/${id}/edit`);
  await page.getByLabel("Automatic retries").selectOption("2");
  await page.getByRole("checkbox", { name: /Disable after repeated failures/ }).check();
  await page.getByLabel("Failed deliveries in a row").fill("1");
  await page.getByLabel("Minutes").fill("0");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Up to 2 attempts per event").waitFor();
  await page.getByText("After 1 failed deliveries in a row over at least 0 s").waitFor();
  const path = `/projects/${projectId}/webhooks/${id}`;
  expect((await world.service.api("GET", path)).body).toMatchObject({
    retry_policy: { max_attempts: 2 },
    auto_disable: { after_failures: 1, min_duration_seconds: 0 },
  });

  world.receiver.on("/policy", (_request, res) => res.writeHead(500).end());
  await withTransaction(world.service.pool, (client) =>
    emitEvent(client, { eventType: "deployment.failed", projectId, payload: {} }),
  );
  await waitUntil('not ((await world.service.api("GET", path)).body.enabled)', async () =>
    (await world.service.api("GET", path)).body.enabled ? undefined : true,
  );
  await page.reload();
  const notice = page.getByRole("alert").filter({ hasText: "Disabled automatically" });
  await notice.waitFor();
  expect(await notice.innerText()).toContain("1 deliveries in a row failed");
  await page.getByRole("button", { name: "Enable" }).click();
  await notice.waitFor({ state: "detached" });
  expect((await world.service.api("GET", path)).body).toMatchObject({ enabled: true, disabled_reason: null });
});

it("sets and removes a rate limit in the form, and names a bad value beside the field", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/paced`,
    events: ["deployment.failed"],
  });
  const path = `/projects/${projectId}/webhooks/${id}`;
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/${id}/edit`);
  await page.getByRole("checkbox", { name: /Limit the rate/ }).check();
  await page.getByLabel("Deliveries a second").fill("0");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("rate_limit.per_second must be above 0").waitFor();
  expect((await world.service.api("GET", path)).body.rate_limit).toBeNull();

  await page.getByLabel("Deliveries a second").fill("2.5");
  await page.getByLabel("Burst").fill("20");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("2.5 a second, bursts of 20, across all replicas").waitFor();
  expect((await world.service.api("GET", path)).body.rate_limit).toEqual({ per_second: 2.5, burst: 20 });

  await page.goto(`${webhooksUrl()}/${id}/edit`);
  expect(await page.getByLabel("Burst").inputValue()).toBe("20");
  await page.getByRole("checkbox", { name: /Limit the rate/ }).uncheck();
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Off: as fast as the service sends").waitFor();
  expect((await world.service.api("GET", path)).body.rate_limit).toBeNull();
});

it("keeps a chat URL secret from the form: masked on every page, delivered whole, edited without losing it", async () => {
  const token = "T0AAAA/B0BBBB/xoxFormToken";
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/new`);
  await page.getByLabel("Payload URL").fill(`${world.receiver.url}/chat/${token}`);
  await page.getByRole("checkbox", { name: /Keep the URL secret/ }).check();
  await page.getByRole("checkbox", { name: "All events" }).check();
  await page.getByRole("button", { name: "Add webhook" }).click();
  const masked = `${world.receiver.url}/********`;
  await page.getByRole("heading", { name: masked }).waitFor();
  const [webhook] = (await world.service.api("GET", `/projects/${projectId}/webhooks`)).body.filter(
    (w: { url_secret?: boolean }) => w.url_secret,
  );
  expect(webhook).toMatchObject({ url: masked, url_secret: true });
  expect(await page.content()).not.toContain("xoxFormToken");

  // Saved again without touching the URL: the masked one goes back and the stored one stays.
  await page.getByRole("link", { name: "Edit", exact: true }).click();
  expect(await page.getByLabel("Payload URL").inputValue()).toBe(masked);
  expect(await page.getByRole("checkbox", { name: /Keep the URL secret/ }).isChecked()).toBe(true);
  await page.getByRole("checkbox", { name: /^Enabled/ }).uncheck();
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByRole("heading", { name: masked }).waitFor();
  const { rows } = await world.service.pool.query("SELECT url, enabled FROM webhooks WHERE id = $1", [
    webhook.id,
  ]);
  expect(rows[0]).toEqual({ url: `${world.receiver.url}/chat/${token}`, enabled: false });

  await page.goto(`${webhooksUrl()}`);
  await page.getByText(masked).first().waitFor();
  expect(await page.content()).not.toContain("xoxFormToken");
  const sent = await world.service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/test`);
  expect(sent.body.success).toBe(true);
  expect(world.receiver.requests.some((r) => r.path === `/chat/${token}`)).toBe(true);
});

it("pages through more than 100 deliveries, and the failed filter pages too", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/many`,
    events: ["deployment.failed"],
  });
  const history = Array.from({ length: 130 }, (_, i) => ({ hoursAgo: i / 10, success: i % 4 !== 0 }));
  await insertDeliveryHistory(world.service.pool, id, projectId, history);
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/${id}`);
  const rows = page.locator("tr[data-delivery-id]");
  const older = page.getByRole("button", { name: "Load older deliveries" });
  /** Clicks "Load older deliveries" until it is gone, each time waiting for the next page's rows. */
  const loadAll = async () => {
    while (await older.isVisible()) {
      const shown = await rows.count();
      await older.click();
      await expect.poll(() => rows.count()).toBeGreaterThan(shown);
    }
  };
  await rows.first().waitFor();
  await loadAll();
  expect(await rows.count()).toBe(130);
  const ids = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-delivery-id"))));
  const newestFirst = await world.service.pool.query<{ id: string }>(
    "SELECT id FROM deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC",
    [id],
  );
  expect(ids).toEqual(newestFirst.rows.map((row) => Number(row.id)));
  await page.getByText("130 shown").waitFor();

  await page.getByLabel("Outcome").selectOption("failed");
  await page.getByText("25 shown").waitFor();
  await loadAll();
  await page.getByText("33 shown").waitFor();
  expect(await rows.getByText(/^Succeeded ·/).count()).toBe(0);
  expect(await rows.getByText(/^Failed ·/).count()).toBe(33);
});

it("reloads a deep link to a delivery", async () => {
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/deep`,
    events: ["deployment.failed"],
  });
  const sent = await world.service.api("POST", `/projects/${projectId}/webhooks/${id}/test`, {
    body: { event_type: "deployment.cancelled" },
  });
  const address = `${webhooksUrl()}/${id}/deliveries/${sent.body.delivery_id}`;
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(address);
  await page.getByRole("heading", { name: `Delivery ${sent.body.delivery_id}` }).waitFor();
  const response = await page.reload();
  expect(response?.status()).toBe(200);
  expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
  await page.getByRole("heading", { name: `Delivery ${sent.body.delivery_id}` }).waitFor();
  expect(page.url()).toBe(address);
  expect(await page.getByText("deployment.cancelled").count()).toBeGreaterThan(0);
});

it("recovers a webhook's failed deliveries from a dialog: queued once each, sent by the service", async () => {
  let status = 503;
  world.receiver.on("/recover", (_request, res) => res.writeHead(status).end());
  const { id } = await createWebhook(world.service, projectId, {
    url: `${world.receiver.url}/recover`,
    events: ["deployment.failed"],
  });
  const emitted = [];
  for (let i = 0; i < 2; i++) {
    emitted.push(
      await withTransaction(world.service.pool, (client) =>
        emitEvent(client, { eventType: "deployment.failed", projectId, payload: { deployment_id: i } }),
      ),
    );
  }
  const deliveries = `/projects/${projectId}/webhooks/${id}/deliveries`;
  await waitUntil('(await world.service.api("GET", deliveries)).body.length === 2', async () =>
    (await world.service.api("GET", deliveries)).body.length === 2 ? true : undefined,
  );
  status = 200;

  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  await page.goto(`${webhooksUrl()}/${id}`);
  await page.getByRole("button", { name: "Recover failed…" }).click();
  const dialog = page.getByRole("dialog", { name: "Recover failed deliveries" });
  await dialog.getByLabel("Failed in").selectOption("1");
  await dialog.getByText(`${world.receiver.url}/recover`).waitFor();
  await dialog.getByRole("button", { name: "Send them again" }).click();
  await page.locator(".recover-result").getByText("Queued 2 deliveries").waitFor();

  const arrived = await waitUntil("got.length === 4", async () => {
    const got = world.receiver.requests.filter((r) => r.path === "/recover");
    return got.length === 4 ? got : undefined;
  });
  const ids = arrived.map((r) => JSON.parse(r.body).id).sort();
  const expected = emitted.map((e) => e.envelope.id);
  expect(ids).toEqual([...expected, ...expected].sort());
  await page.reload();
  await expect
    .poll(() =>
      page
        .locator("tr[data-delivery-id]")
        .getByText(/^Succeeded ·/)
        .count(),
    )
    .toBe(2);
});
