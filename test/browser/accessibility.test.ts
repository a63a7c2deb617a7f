import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.js";
import { type Showcase, startShowcase, visitStates } from "../support/dashboard-showcase.js";

// axe-core (WCAG 2.0 A and AA, WCAG 2.1 AA, and axe's best practices) on every state of every page,
// at a desktop and a phone size, in the light and the dark scheme: zero violations. axe is evaluated
// through the DevTools protocol, which the page's Content-Security-Policy (no inline script) does not
// govern; the page itself is served exactly as users get it.

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const tags = ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"];
const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const schemes = ["light", "dark"] as const;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** axe's findings on the page as it is now; the page's own globals are reached through globalThis. */
async function axeViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async (runOnly) => {
    const { axe, document } = globalThis as unknown as {
      axe: { run(context: unknown, options: object): Promise<{ violations: Violation[] }> };
      document: unknown;
    };
    const options = { runOnly: { type: "tag", values: runOnly }, resultTypes: ["violations"] };
    const { violations } = await axe.run(document, options);
    return violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
    }));
  }, tags);
}

let showcase: Showcase;
let browser: Browser;
beforeAll(async () => {
  [showcase, browser] = await Promise.all([startShowcase(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await showcase?.close();
});

describe.each(Object.entries(sizes))("axe at %s size", (_size, viewport) => {
  it.each(schemes)(
    "finds no violation on any page state, %s scheme",
    { timeout: 300_000 },
    async (colorScheme) => {
      const context = await browser.newContext({ viewport, colorScheme });
      try {
        const page = await context.newPage();
        const found: string[] = [];
        let visited = 0;
        for await (const state of visitStates(page, showcase)) {
          visited++;
          for (const v of await axeViolations(page)) {
            const where = v.nodes.map(
              (n) =>
                `      ${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1).join(" ").trim()}`,
            );
            found.push(`${state.name}: ${v.id} (${v.impact}) ${v.help}\n${where.join("\n")}`);
          }
        }
        expect(visited).toBe(showcase.states.length);
        expect(found.join("\n")).toBe("");
      } finally {
        await context.close();
      }
    },
  );
});
