import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerMetricsEndpoint } from "../../src/app/metrics-endpoint.js";
import { registryWithoutWebhookIds } from "../../src/metrics.js";
import { createProject, createWebhook, emit } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// /metrics as a hostile tenant and a crowd of scrapers meet it: without METRICS_TOKEN it shows no
// webhook ids; with it, it answers only the token's holder, per webhook; and scrapes that come
// together, or within METRICS_CACHE_MS of each other, share one rendering.

const token = "metrics-token-0123456789";
let open: TestService;
let guarded: TestService;
let receiver: Receiver;
let webhookId: number;

const scrape = (service: TestService, authorization?: string) =>
  fetch(`${service.baseUrl}/metrics`, authorization ? { headers: { authorization } } : {});

/** promtool, Prometheus's own checker, reads the exposition text: it must parse. */
function promtoolCheck(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile("promtool", ["check", "metrics"], (error, stdout, stderr) =>
      // promtool exits 3 for lint hints (naming advice) but 1 for text it cannot parse.
      error && error.code !== 3 ? reject(new Error(stderr || stdout)) : resolve(stderr + stdout),
    );
    child.stdin?.end(text);
  });
}

beforeAll(async () => {
  receiver = await startReceiver();
  open = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "200" });
  guarded = await startTestService({ METRICS_TOKEN: token, DELIVERY_WORKERS: "false" }, {});
  const project = await createProject(open, "metrics", "Metrics");
  webhookId = (
    await createWebhook(open, project, { url: `${receiver.url}/ok`, events: ["deployment.succeeded"] })
  ).id;
  await emit(open.pool, project, "deployment.succeeded");
  await receiver.waitFor(1);
});
afterAll(async () => {
  await guarded?.close();
  await open?.close();
  await receiver?.close();
});

describe("without METRICS_TOKEN", () => {
  it("answers without a key, with delivery counts summed over webhooks and no webhook id", async () => {
    const text = await waitUntil(
      "a successful deployment.succeeded delivery counted in the scrape",
      async () => {
        const body = await (await scrape(open)).text();
        return /^webhook_operator_deliveries_total\{event_type="deployment\.succeeded",outcome="success",reason="none"\} [1-9]/m.test(
          body,
        )
          ? body
          : undefined;
      },
    );
    expect(text).not.toContain("webhook_id");
    expect(text).toMatch(/^# TYPE webhook_operator_deliveries_total counter$/m);
    await promtoolCheck(text);
  });
});

describe("with METRICS_TOKEN", () => {
  it.each([
    ["no Authorization", undefined],
    ["an API key", "Bearer test-admin-key-0123456789"],
    ["a wrong token", `Bearer ${token}x`],
    ["the token under another scheme", `Basic ${token}`],
    ["the token without a scheme", token],
  ])("refuses %s: 401, the error shape of the API, and a Bearer challenge", async (_name, authorization) => {
    const response = await scrape(guarded, authorization);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await response.json()).toEqual({
      error: { code: "unauthorized", message: expect.stringContaining("METRICS_TOKEN") },
    });
  });

  it("answers the token's holder with delivery counts per webhook", async () => {
    const response = await scrape(guarded, `Bearer ${token}`);
    expect(response.status).toBe(200);
    // fetch asks for gzip, as Prometheus does, and reads it back.
    expect(response.headers.get("content-encoding")).toBe("gzip");
    const text = await response.text();
    expect(text).toMatch(
      new RegExp(
        `^webhook_operator_deliveries_total\\{webhook_id="${webhookId}",event_type="deployment\\.succeeded"`,
        "m",
      ),
    );
    await promtoolCheck(text);
  });
});

describe("one rendering for many scrapes", () => {
  /**
   * The endpoint alone on a port of its own, counting the scrapes that reached it and its renderings;
   * a rendering waits for `release()` while `hold` is set.
   */
  async function countingEndpoint(cacheMs: number, hold = false) {
    let renders = 0;
    let arrived = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const router = express.Router();
    registerMetricsEndpoint(router, open.pool, {
      cacheMs,
      render: async () => {
        renders++;
        if (hold) await held;
        return registryWithoutWebhookIds.metrics();
      },
    });
    const app = express()
      .use((_req, _res, next) => {
        arrived++;
        next();
      })
      .use(router);
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const scrapeAll = (n: number) =>
      Promise.all(Array.from({ length: n }, async () => (await fetch(url)).text()));
    return {
      scrapeAll,
      release,
      renders: () => renders,
      arrived: () => arrived,
      close: () => new Promise((resolve) => server.close(resolve)),
    };
  }

  it("64 scrapes that arrive while a rendering runs share it, even with METRICS_CACHE_MS=0", async () => {
    const endpoint = await countingEndpoint(0, true);
    try {
      const scrapes = endpoint.scrapeAll(64);
      await waitUntil("endpoint.arrived() === 64", async () =>
        endpoint.arrived() === 64 ? true : undefined,
      );
      endpoint.release();
      const bodies = await scrapes;
      expect(new Set(bodies).size).toBe(1);
      expect(endpoint.renders()).toBe(1);
      // The next scrape comes after that rendering ended: with 0 it renders anew.
      await endpoint.scrapeAll(1);
      expect(endpoint.renders()).toBe(2);
    } finally {
      await endpoint.close();
    }
  });

  it("scrapes one after another within METRICS_CACHE_MS reuse the last rendering", async () => {
    const endpoint = await countingEndpoint(3_600_000);
    try {
      for (let i = 0; i < 10; i++) await endpoint.scrapeAll(1);
      expect(endpoint.renders()).toBe(1);
    } finally {
      await endpoint.close();
    }
  });
});
