import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { markManagedByResource } from "../support/dashboard-data.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";

// Who sees what: the key's storage, a wrong key, a project-scoped key, and a webhook that a
// Kubernetes Webhook resource manages (read-only, no write offered that the API would refuse).

let world: DashboardWorld;
let storefront: number;
let payments: number;

beforeAll(async () => {
  world = await startDashboardWorld();
  storefront = await createProject(world.service, "storefront", "Storefront");
  payments = await createProject(world.service, "payments", "Payments");
});

afterAll(async () => {
  await world?.close();
});

it("keeps the key in sessionStorage only, and Sign out forgets it", async () => {
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);
  // A string, so the browser's globals (document, location) need no DOM types in this Node project.
  const stored = await page.evaluate(
    "({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie, url: location.href })",
  );
  expect(stored).toEqual({
    session: [world.service.adminKey],
    local: 0,
    cookie: "",
    url: `${world.service.baseUrl}/projects`,
  });
  expect(await page.context().cookies()).toEqual([]);

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await page.goto(`${world.service.baseUrl}/projects/${storefront}/settings/webhooks`);
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  // Signing in again returns to the address that asked for it.
  await page.getByLabel("API key").fill(world.service.adminKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`/projects/${storefront}/settings/webhooks`);
});

it("says plainly when a key is wrong, and keeps nothing", async () => {
  const page = await world.newPage();
  await page.goto(`${world.service.baseUrl}/sign-in`);
  await page.getByLabel("API key").fill("not-a-real-key-0000000000");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").getByText("That API key is not valid.").waitFor();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  expect(await page.getByLabel("API key").getAttribute("aria-invalid")).toBe("true");
});

it("shows a project-scoped key only its projects", async () => {
  const created = await world.service.api("POST", "/api-keys", {
    body: { name: "storefront-only", project_ids: [storefront] },
  });
  expect(created.status).toBe(201);
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, created.body.key);
  await page.getByRole("link", { name: "Storefront" }).waitFor();
  expect(await page.getByRole("link", { name: "Payments" }).count()).toBe(0);

  await page.goto(`${world.service.baseUrl}/projects/${payments}/settings/webhooks`);
  await page.getByRole("alert").getByText(`Project ${payments} not found.`).waitFor();
  expect(await page.getByRole("link", { name: "Add webhook" }).count()).toBe(1);
});

it("shows a webhook managed by a Webhook resource read-only, with the kubectl command", async () => {
  const { id } = await createWebhook(world.service, storefront, {
    url: "https://chat.example.com/hook",
    events: ["deployment.succeeded"],
  });
  await markManagedByResource(world.service.pool, id, "storefront/release-notes");
  const page = await world.newPage();
  await signIn(page, world.service.baseUrl, world.service.adminKey);

  await page.goto(`${world.service.baseUrl}/projects/${storefront}/settings/webhooks`);
  await page.getByText("Managed by Webhook storefront/release-notes").waitFor();
  expect(
    await page.getByRole("switch", { name: "Enabled: https://chat.example.com/hook" }).isDisabled(),
  ).toBe(true);

  await page.getByRole("link", { name: "https://chat.example.com/hook" }).click();
  const notice = page.getByRole("note").filter({ hasText: "Managed by Webhook" });
  await notice.waitFor();
  expect(await notice.innerText()).toContain(
    "kubectl edit webhooks.webhook-operator.io release-notes -n storefront",
  );
  for (const name of ["Edit", "Disable", "Enable", "Delete"]) {
    expect(
      await page
        .getByRole("button", { name, exact: true })
        .or(page.getByRole("link", { name, exact: true }))
        .count(),
    ).toBe(0);
  }
  // A test event is no write: it stays available.
  await page.getByRole("button", { name: "Send test event" }).waitFor();

  await page.goto(`${world.service.baseUrl}/projects/${storefront}/settings/webhooks/${id}/edit`);
  await notice.waitFor();
  expect(await page.getByLabel("Payload URL").count()).toBe(0);
});
