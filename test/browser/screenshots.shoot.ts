import { mkdir } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchBrowser, signIn } from "../support/browser.js";
import {
  createProject,
  createWebhook,
  insertDeliveryHistory,
  markManagedByResource,
} from "../support/dashboard-data.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// `npm run screenshots`: every page of the dashboard at a desktop and a phone size, light and dark,
// into docs/screenshots/<page>-<size>-<scheme>.png, from a service seeded with realistic history.
const outDir = new URL("../../docs/screenshots/", import.meta.url);
const sizes = { desktop: { width: 1280, height: 800 }, mobile: { width: 390, height: 844 } };
const schemes = ["light", "dark"] as const;

const signingSecret = "whsec_example_secret_value";
let service: TestService;
let receiver: Receiver;
const pages: Record<string, string> = {};

beforeAll(async () => {
  service = await startTestService();
  receiver = await startReceiver();
  const project = await createProject(service, "Storefront", "storefront");
  await createProject(service, "Payments API", "payments");
  await createProject(service, "Internal tools", "internal-tools");
  const signed = await createWebhook(service, project, {
    url: `${receiver.url}/hooks/deployments`,
    events: ["deployment.succeeded", "deployment.failed", "deployment.cancelled"],
    secret: signingSecret,
  });
  const managed = await createWebhook(service, project, {
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
      "deployment.failed",
      "deployment.cancelled",
      "project.created",
      "project.deleted",
      "domain.created",
      "domain.provisioned",
      "email.delivered",
      "email.bounced",
      "email.complained",
    ],
    enabled: false,
  });
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
  pages["sign-in"] = "/sign-in";
  pages.projects = "/projects";
  pages.webhooks = `/projects/${project}/settings/webhooks`;
  pages["add-webhook"] = `/projects/${project}/settings/webhooks/new`;
  pages.webhook = `/projects/${project}/settings/webhooks/${signed}`;
  pages["webhook-managed"] = `/projects/${project}/settings/webhooks/${managed}`;
  pages.delivery = `/projects/${project}/settings/webhooks/${signed}/deliveries/${failed.body[0].id}`;
  await mkdir(outDir, { recursive: true });
});

afterAll(async () => {
  await receiver?.close();
  await service?.close();
});

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await expect.poll(() => page.getByText(/^Loading /).count()).toBe(0);
}

it("captures every page at both sizes in both colour schemes", async () => {
  const browser = await launchBrowser();
  try {
    for (const [sizeName, viewport] of Object.entries(sizes)) {
      for (const colorScheme of schemes) {
        const context = await browser.newContext({ viewport, colorScheme, deviceScaleFactor: 1 });
        const page = await context.newPage();
        for (const [name, path] of Object.entries(pages)) {
          if (name === "sign-in") await page.goto(`${service.baseUrl}${path}`);
          else if (name === "projects") await signIn(page, service.baseUrl, service.adminKey);
          else await page.goto(`${service.baseUrl}${path}`);
          await settle(page);
          await page.screenshot({
            path: new URL(`${name}-${sizeName}-${colorScheme}.png`, outDir).pathname,
            fullPage: true,
          });
        }
        await context.close();
      }
    }
  } finally {
    await browser.close();
  }
});
