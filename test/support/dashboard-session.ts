import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser } from "./browser.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { startTestService, type TestService } from "./service.js";

/** One test file's world: the real service, a receiver on loopback, and a browser. */
export interface DashboardWorld {
  service: TestService;
  receiver: Receiver;
  browser: Browser;
  /** A fresh browser context (empty sessionStorage) and page; closed by close(). */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function startDashboardWorld(): Promise<DashboardWorld> {
  const service = await startTestService();
  const receiver = await startReceiver();
  const browser = await launchBrowser();
  const contexts: BrowserContext[] = [];
  return {
    service,
    receiver,
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      contexts.push(context);
      return context.newPage();
    },
    async close() {
      for (const context of contexts) await context.close();
      await browser.close();
      await receiver.close();
      await service.close();
    },
  };
}
