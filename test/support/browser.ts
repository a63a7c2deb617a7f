import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

// Debian's chromium (installed by .ci/run), driven by playwright-core: no browser is downloaded.
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Headless, and without the background services (sync, component updates, field trials) whose
 * connections this sandboxed network refuses many at a time. launch() gives each browser a fresh
 * temporary profile, so no session or cache leaks between runs.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No Chromium at ${chromiumPath}: install Debian's package (apt-get install -y chromium), or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Fills the sign-in form and waits for the projects page. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}
