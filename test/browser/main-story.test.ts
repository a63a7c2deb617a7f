import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { signIn } from "../support/browser.js";
import { type DashboardWorld, startDashboardWorld } from "../support/dashboard-session.js";

// The issue's main story, in one test, as a user clicks through it.

let world: DashboardWorld;
let projectId: number;

beforeAll(async () => {
  world = await startDashboardWorld();
  projectId = await createProject(world.service, "storefront", "Storefront");
});

afterAll(async () => {
  await world?.close();
});

function validSignature(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const expected = `sha256=${createHmac("sha256", secret).update(`${headers["x-webhook-timestamp"]}.${body}`).digest("hex")}`;
  const actual = String(headers["x-webhook-signature"] ?? "");
  return actual.length === expected.length && timingSafeEqual(Buffer.from(actual), Buffer.from(expected));
}

it("sign in → add a signed webhook → test event → signature valid → delivery shown → failure → filter → replay succeeds", async () => {
  const { service, receiver } = world;
  const secret = "a-strong-secret-for-the-story";
  const page = await world.newPage();

  // Sign in and find the project's webhook settings.
  await signIn(page, service.baseUrl, service.adminKey);
  await page.getByRole("link", { name: "Storefront" }).click();
  await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();
  await page.getByText("No webhooks yet").waitFor();
  expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/settings/webhooks`);

  // Add a webhook with a secret through the form.
  await page.getByRole("link", { name: "Add webhook" }).first().click();
  await page.getByLabel("Payload URL").fill(`${receiver.url}/story`);
  await page.getByRole("checkbox", { name: /deployment\.failed/ }).check();
  await page.getByRole("checkbox", { name: /deployment\.succeeded/ }).check();
  await page.getByLabel("Secret (optional)").fill(secret);
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.getByRole("heading", { name: `${receiver.url}/story` }).waitFor();
  await page.getByText("Signed", { exact: true }).waitFor();
  const [webhook] = (await service.api("GET", `/projects/${projectId}/webhooks`)).body;
  expect(webhook).toMatchObject({ has_secret: true, events: ["deployment.failed", "deployment.succeeded"] });

  // Send a test event: the receiver gets it, signed with the secret.
  await page.getByLabel("Test event type").selectOption("deployment.failed");
  await page.getByRole("button", { name: "Send test event" }).click();
  await page.locator(".test-result").getByText("Succeeded · 200").waitFor();
  const [received] = await receiver.waitFor(1);
  expect(received?.headers["x-webhook-event"]).toBe("deployment.failed");
  expect(validSignature(secret, received?.headers ?? {}, received?.body ?? "")).toBe(true);
  const envelope = JSON.parse(received?.body ?? "{}");

  // The delivery appears with its headers and body.
  await page
    .locator(".test-result")
    .getByRole("link", { name: /^Delivery \d+$/ })
    .click();
  const request = page.getByRole("region", { name: "Request" });
  await request.getByText("X-Webhook-Signature").waitFor();
  expect(await request.getByRole("row", { name: /X-Webhook-Event/ }).innerText()).toContain(
    "deployment.failed",
  );
  expect(await request.getByRole("row", { name: /X-Webhook-Delivery/ }).innerText()).toContain(
    received?.headers["x-webhook-delivery"],
  );
  // The timestamp and signature shown are the ones the receiver got.
  expect(await request.getByRole("row", { name: /X-Webhook-Timestamp/ }).innerText()).toContain(
    received?.headers["x-webhook-timestamp"],
  );
  expect(await request.getByRole("row", { name: /X-Webhook-Signature/ }).innerText()).toContain(
    received?.headers["x-webhook-signature"],
  );
  await page.getByRole("button", { name: "Raw" }).click();
  expect(await request.locator("pre").innerText()).toBe(received?.body);

  // The receiver starts failing; a second test event fails.
  receiver.on("/story", (_request, res) =>
    res.writeHead(500, { "content-type": "text/plain" }).end("receiver down"),
  );
  await page.getByRole("link", { name: "Back to webhook" }).click();
  await page.getByRole("button", { name: "Send test event" }).click();
  await page.locator(".test-result").getByText("Failed · 500").waitFor();

  // Filter the failed ones: only that attempt is listed.
  await page.getByLabel("Outcome").selectOption("failed");
  await expect.poll(() => page.locator("tr[data-delivery-id]").count()).toBe(1);
  await page.locator("tr[data-delivery-id]").getByText("Failed · 500").waitFor();

  // Replay it from its detail page once the receiver is back: attempt 2 succeeds and shows in place.
  await page.locator("tr[data-delivery-id]").getByRole("link").click();
  await page.getByText("receiver down").waitFor();
  receiver.on("/story", (_request, res) => res.writeHead(200).end("back"));
  await page.getByRole("button", { name: "Replay" }).click();
  const result = page.locator(".replay-result");
  await result.getByText("Succeeded · 200").waitFor();
  expect(await result.innerText()).toMatch(/Attempt 2/);
  const replayed = (await receiver.waitFor(3))[2];
  const failedEnvelope = JSON.parse(receiver.requests[1]?.body ?? "{}");
  expect(JSON.parse(replayed?.body ?? "{}").id).toBe(failedEnvelope.id);
  expect(failedEnvelope.id).not.toBe(envelope.id);
  expect(validSignature(secret, replayed?.headers ?? {}, replayed?.body ?? "")).toBe(true);
});
