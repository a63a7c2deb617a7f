import { mkdir } from "node:fs/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.js";
import { type Showcase, startShowcase, visitStates } from "../support/dashboard-showcase.js";

// `npm run screenshots`: the main page states of the dashboard at a desktop and a phone size, light and
// dark, into docs/screenshots/<file>-<size>-<scheme>.png, from a service seeded with realistic history.
const outDir = new URL("../../docs/screenshots/", import.meta.url);
const sizes = { desktop: { width: 1280, height: 800 }, mobile: { width: 390, height: 844 } };
const schemes = ["light", "dark"] as const;
/** The states photographed, by the file name they get. */
const files: Record<string, string> = {
  "sign-in": "sign-in",
  projects: "projects",
  webhooks: "webhooks",
  "add webhook": "add-webhook",
  "add webhook, field errors": "add-webhook-errors",
  "add webhook, Teams card preview": "add-webhook-teams-preview",
  webhook: "webhook",
  "webhook, managed by a resource": "webhook-managed",
  delivery: "delivery",
  "delivery, replayed": "delivery-replayed",
};

let showcase: Showcase;
beforeAll(async () => {
  showcase = await startShowcase();
  await mkdir(outDir, { recursive: true });
});
afterAll(() => showcase?.close());

it("captures the main page states at both sizes in both colour schemes", { timeout: 600_000 }, async () => {
  const browser = await launchBrowser();
  try {
    for (const [sizeName, viewport] of Object.entries(sizes)) {
      for (const colorScheme of schemes) {
        const context = await browser.newContext({ viewport, colorScheme, deviceScaleFactor: 1 });
        const page = await context.newPage();
        const shot: string[] = [];
        for await (const state of visitStates(page, showcase)) {
          const file = files[state.name];
          if (!file) continue;
          await page.screenshot({
            path: new URL(`${file}-${sizeName}-${colorScheme}.png`, outDir).pathname,
            fullPage: true,
          });
          shot.push(state.name);
        }
        expect(shot.sort()).toEqual(Object.keys(files).sort());
        await context.close();
      }
    }
  } finally {
    await browser.close();
  }
});
