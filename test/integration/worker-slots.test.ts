import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { minPauseMs, pausesBeforeAttempts } from "../../src/delivery-engine/retry-after.js";
import { createProject, createWebhook, deliveriesOf, emitMany } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// What one tenant's webhook could do to every tenant's deliveries, through the API against the real
// worker and a real receiver: queued rows of a webhook disabled meanwhile once kept a slot each for
// good (at DELIVERY_CONCURRENCY of them the worker claimed nothing more, for any project), and a
// receiver answering 429 with Retry-After: 0 had its deliveries sent again as fast as it answered.
// The worker's own model test is test/unit/delivery-worker-model.test.ts.

const concurrency = 8;
let service: TestService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startTestService({
    DELIVERY_CONCURRENCY: String(concurrency),
    DELIVERY_POLL_INTERVAL_MS: "200",
  });
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

describe("a webhook disabled with deliveries queued", () => {
  it("leaves no slot held: another project's deliveries are still sent", async () => {
    // Tenant A's recipe, with three times as many queued rows as the worker has slots.
    const queued = 3 * concurrency;
    const a = await createProject(service, "tenant-a");
    receiver.on("/a", (_req, res) => res.writeHead(500).end());
    const hook = await createWebhook(service, a, {
      url: `${receiver.url}/a`,
      events: ["deployment.succeeded"],
    });
    const base = `/projects/${a}/webhooks/${hook.id}`;
    for (let i = 0; i < queued; i += 1)
      expect((await service.api("POST", `${base}/test`, { body: {} })).status).toBe(200);
    const paced = { rate_limit: { per_second: 0.001, burst: 1 } };
    expect((await service.api("PUT", base, { body: paced })).status).toBe(200);
    const recovered = await service.api("POST", `${base}/recover`, { body: { since: hourAgo() } });
    expect(recovered.body.queued).toBe(queued);
    expect((await service.api("PUT", base, { body: { enabled: false } })).status).toBe(200);
    expect((await service.api("PUT", base, { body: { rate_limit: null } })).status).toBe(200);
    await waitUntil("A's queued deliveries recorded as not sent", async (saw) => {
      const list = await deliveriesOf(service, a, hook.id, "?limit=100");
      const notSent = list.filter((d) => d.error_message?.startsWith("Not sent")).length;
      saw(`${notSent} not sent`);
      // The burst's one token sent one of them before the webhook was disabled.
      return notSent >= queued - 1 ? true : undefined;
    });

    const b = await createProject(service, "tenant-b");
    const hookOfB = await createWebhook(service, b, {
      url: `${receiver.url}/b`,
      events: ["deployment.succeeded"],
    });
    await emitMany(service.pool, b, "deployment.succeeded", 5);
    const list = await waitUntil("B's 5 deliveries sent and recorded", async (saw) => {
      const recorded = await deliveriesOf(service, b, hookOfB.id);
      saw(`${receiver.requests.filter((r) => r.path === "/b").length} sent, ${recorded.length} recorded`);
      return recorded.length === 5 ? recorded : undefined;
    });
    expect(list.map((d) => d.success)).toEqual([true, true, true, true, true]);
    expect(service.engine.stuckSends()).toBe(0);
  });
});

describe("a receiver answering 429 with Retry-After: 0", () => {
  it("is paused at least a second each time, and after a run of pauses its answers are recorded as attempts", async () => {
    const deliveries = 30;
    const c = await createProject(service, "tenant-c");
    receiver.on("/throttling", (_req, res) => res.writeHead(429, { "retry-after": "0" }).end());
    const hook = await createWebhook(service, c, {
      url: `${receiver.url}/throttling`,
      events: ["deployment.succeeded"],
    });
    await emitMany(service.pool, c, "deployment.succeeded", deliveries);
    const list = await waitUntil(
      `${deliveries} attempts recorded`,
      async (saw) => {
        const recorded = await deliveriesOf(service, c, hook.id, "?limit=100");
        saw(
          `${recorded.length} recorded, ${receiver.requests.filter((r) => r.path === "/throttling").length} requests`,
        );
        return recorded.length === deliveries ? recorded : undefined;
      },
      // Five pauses of a second each come first.
      { timeoutMs: 30_000 },
    );
    expect(list.every((d) => d.status_code === 429 && !d.success)).toBe(true);
    // Each pause sent back what its receiver was sending then: at most the 2 sends a webhook may have
    // open before its receiver has answered well once. Before, 2,588 requests in 20 s for 30 deliveries.
    const arrivals = receiver.requests
      .filter((r) => r.path === "/throttling")
      .map((r) => r.receivedAt)
      .sort((x, y) => x - y);
    expect(arrivals.length).toBeGreaterThanOrEqual(deliveries + pausesBeforeAttempts);
    expect(arrivals.length).toBeLessThanOrEqual(deliveries + 2 * pausesBeforeAttempts);
    // Each pause lasted at least a second: the k-th pause's sends came no sooner than k - 1 seconds after
    // the first request, so before the run could end only the pauses' own sends arrived (a lower bound
    // from the service's pauses, which a slow machine only makes later). With no shortest pause the run
    // ended within milliseconds and every delivery was sent at once after it.
    const first = arrivals[0] as number;
    const beforeRunEnds = arrivals.filter((at) => at < first + pausesBeforeAttempts * minPauseMs);
    expect(beforeRunEnds.length).toBeLessThanOrEqual(2 * pausesBeforeAttempts);
  });
});
