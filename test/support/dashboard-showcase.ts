import type { Page } from "playwright-core";
import { expect } from "vitest";
import { createProject, createWebhook } from "./api-fixtures.js";
import { signIn } from "./browser.js";
import { insertDeliveryHistory, markManagedByResource } from "./dashboard-data.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { startTestService, type TestService } from "./service.js";

// A service seeded the way a real one looks after a month (three projects, a signed webhook with 30 days
// of history and an outage, a webhook declared by a Webhook resource, a disabled one, one the service
// disabled automatically), and every state of every dashboard page, for the screenshots and for the
// accessibility checks.

export interface Showcase {
  service: TestService;
  receiver: Receiver;
  /** Every page state, each reached from a signed-in (or, for sign-in, signed-out) page. */
  states: PageState[];
  close(): Promise<void>;
}

export interface PageState {
  name: string;
  /** Signed-out states are visited first, before the context signs in. */
  signedOut?: boolean;
  open(page: Page): Promise<void>;
}

const signingSecret = "whsec_example_secret_value";

export async function startShowcase(): Promise<Showcase> {
  const service = await startTestService();
  const receiver = await startReceiver();
  const project = await createProject(service, "storefront", "Storefront");
  const empty = await createProject(service, "payments", "Payments API");
  await createProject(service, "internal-tools", "Internal tools");
  const { id: signed } = await createWebhook(service, project, {
    url: `${receiver.url}/hooks/deployments`,
    events: ["deployment.succeeded", "deployment.failed", "deployment.cancelled"],
    secret: signingSecret,
    retry_policy: { max_attempts: 3 },
  });
  const { id: managed } = await createWebhook(service, project, {
    url: "https://chat.example.com/api/webhooks/release-notes",
    events: ["deployment.succeeded"],
  });
  await markManagedByResource(service.pool, managed, "storefront/release-notes");
  await createWebhook(service, project, {
    url: "https://audit.example.com/ingest",
    events: [
      "deployment.created",
      "deployment.ready",
      "deployment.succeeded",
      "project.created",
      "email.bounced",
    ],
    enabled: false,
  });
  const { id: autoDisabled } = await createWebhook(service, project, {
    url: "https://status.example.com/hooks/rollouts",
    events: ["deployment.failed"],
    auto_disable: { after_failures: 10, min_duration_seconds: 3600 },
  });
  await service.pool.query(
    `UPDATE webhooks SET enabled = false, disabled_at = now() - interval '2 hours',
            disabled_reason = 'Disabled automatically: 12 deliveries in a row failed since 2026-11-22T19:11:25.030Z (auto_disable: after 10 failures over at least 3600 s). Enable it again once the receiver works.'
      WHERE id = $1`,
    [autoDisabled],
  );
  const history = [];
  for (let hour = 0; hour < 24 * 30; hour += 3) {
    const outage = hour >= 5 && hour <= 9;
    history.push({
      hoursAgo: hour + 0.5,
      success: !outage && hour % 47 !== 0,
      eventType: hour % 2 ? "deployment.succeeded" : "deployment.failed",
    });
    if (hour < 24) history.push({ hoursAgo: hour + 0.2, success: !outage });
  }
  await insertDeliveryHistory(service.pool, signed, project, history, signingSecret);
  await insertDeliveryHistory(service.pool, managed, project, [{ hoursAgo: 2, success: true }]);
  const failed = await service.api(
    "GET",
    `/projects/${project}/webhooks/${signed}/deliveries?success=false&limit=1`,
  );

  const at = (path: string) => async (page: Page) => {
    await page.goto(`${service.baseUrl}${path}`);
  };
  const webhooks = `/projects/${project}/settings/webhooks`;
  const webhook = `${webhooks}/${signed}`;
  const delivery = `${webhook}/deliveries/${failed.body[0].id}`;
  const states: PageState[] = [
    { name: "sign-in", signedOut: true, open: at("/sign-in") },
    {
      name: "sign-in, wrong key",
      signedOut: true,
      open: async (page) => {
        await page.goto(`${service.baseUrl}/sign-in`);
        await page.getByLabel("API key").fill("wo_not-a-key-of-this-service");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").waitFor();
      },
    },
    { name: "projects", open: at("/projects") },
    { name: "webhooks", open: at(webhooks) },
    { name: "webhooks, none yet", open: at(`/projects/${empty}/settings/webhooks`) },
    { name: "add webhook", open: at(`${webhooks}/new`) },
    {
      name: "add webhook, field errors",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhooks}/new`);
        await page.getByRole("button", { name: "Add webhook" }).click();
        await page.getByText("url is required").waitFor();
      },
    },
    {
      name: "add webhook, Teams card preview",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhooks}/new`);
        await page.getByLabel("Payload URL").fill("https://hooks.example.com/workflows/deployments");
        await page.getByLabel("Body format").selectOption("msteams");
        await page.getByTestId("teams-card").locator(".ac-adaptiveCard").waitFor();
      },
    },
    { name: "edit webhook", open: at(`${webhook}/edit`) },
    { name: "webhook", open: at(webhook) },
    {
      name: "webhook, 30 days",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhook}`);
        await page.getByRole("button", { name: "30 days" }).click();
        await expect
          .poll(() => page.getByRole("button", { name: "30 days" }).getAttribute("aria-pressed"))
          .toBe("true");
      },
    },
    {
      name: "webhook, test event sent",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhook}`);
        await page.getByRole("button", { name: "Send test event" }).click();
        await page
          .locator(".test-result")
          .getByText(/Succeeded|Failed/)
          .waitFor();
      },
    },
    {
      name: "webhook, delete dialog",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhook}`);
        await page.getByRole("button", { name: "Delete", exact: true }).click();
        await page.getByRole("dialog", { name: "Delete this webhook?" }).waitFor();
      },
    },
    {
      name: "webhook, recover dialog",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${webhook}`);
        await page.getByRole("button", { name: "Recover failed…" }).click();
        await page.getByRole("dialog", { name: "Recover failed deliveries" }).waitFor();
      },
    },
    { name: "webhook, managed by a resource", open: at(`${webhooks}/${managed}`) },
    { name: "webhook, disabled automatically", open: at(`${webhooks}/${autoDisabled}`) },
    { name: "delivery", open: at(delivery) },
    {
      name: "delivery, replayed",
      open: async (page) => {
        await page.goto(`${service.baseUrl}${delivery}`);
        await page.getByRole("button", { name: "Replay" }).click();
        await page.locator(".replay-result").getByRole("link").waitFor();
      },
    },
    { name: "page not found", open: at("/projects/1/nothing/here") },
  ];
  return {
    service,
    receiver,
    states,
    close: async () => {
      await receiver.close();
      await service.close();
    },
  };
}

/** Waits until the page has loaded what it shows (no request in flight, no "Loading …" left). */
export async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await expect.poll(() => page.getByText(/^Loading /).count()).toBe(0);
}

/** Visits every state in order: the signed-out ones, then signs in for the rest. */
export async function* visitStates(page: Page, showcase: Showcase): AsyncGenerator<PageState> {
  for (const state of showcase.states.filter((s) => s.signedOut)) {
    await state.open(page);
    await settle(page);
    yield state;
  }
  await signIn(page, showcase.service.baseUrl, showcase.service.adminKey);
  for (const state of showcase.states.filter((s) => !s.signedOut)) {
    await state.open(page);
    await settle(page);
    yield state;
  }
}
