import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { createProject, createWebhook, deliveriesOf, emitMany } from "../support/api-fixtures.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Pace per webhook (docs/deliveries.md, "Pace"), with real receivers on loopback: a rate limit that
// two engines on one database honour together, a receiver's 429/503 with Retry-After (seconds and an
// HTTP date) pausing only its own webhook, and 410 Gone disabling a webhook that opted into
// auto-disable. The bounds checked are lower bounds on time (never sooner than allowed): a loaded
// machine only spreads the sends further apart.

let database: TestDatabase;
let service: TestService;
let second: TestService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  database = await createTestDatabase();
  const settings = { DELIVERY_POLL_INTERVAL_MS: "200" };
  service = await startTestService(settings, { database });
  second = await startTestService(settings, { database });
});
afterAll(async () => {
  await second.close();
  await service.close();
  await receiver.close();
  await database.drop();
});

/** Postgres's clock (the bucket's) and this process's read the same system clock, in ms here. */
const clockSlackMs = 2;

const arrivals = (path: string) =>
  receiver.requests.filter((request) => request.path === path).map((request) => request.receivedAt);

async function webhookAt(projectId: number, path: string, fields: Record<string, unknown> = {}) {
  const created = await createWebhook(service, projectId, {
    url: `${receiver.url}${path}`,
    events: ["deployment.created"],
    ...fields,
  });
  return created.id as number;
}

async function requestsAt(path: string, count: number) {
  return waitUntil(`${count} requests at ${path}`, async (saw) => {
    saw(arrivals(path).length);
    return arrivals(path).length >= count ? arrivals(path) : undefined;
  });
}

describe("a webhook's rate limit", () => {
  it("is shared by two engines on one database: no request comes sooner than one bucket for both allows", async () => {
    const projectId = await createProject(service, "paced");
    const webhookId = await webhookAt(projectId, "/paced", { rate_limit: { per_second: 4, burst: 2 } });
    const shown = await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}`);
    expect(shown.body.rate_limit).toEqual({ per_second: 4, burst: 2 });
    const emittedAt = Date.now();
    await emitMany(service.pool, projectId, "deployment.created", 12);
    const times = (await requestsAt("/paced", 12)).toSorted((a, b) => a - b);
    // The bucket holds at most the burst (2) when the events are emitted, and the two engines' claims
    // take 4 tokens a second from it together: the k-th request was claimed, so sent, no sooner than
    // (k - 2) / 4 s after the emit. Only lower bounds: a loaded machine delays a request, and the
    // receiver's clock cannot tell one delayed on its way from one sent late. (Counting requests per
    // window of arrivals did: three claimed a few hundred ms apart can reach a busy receiver at once.)
    // With a bucket per engine, the 3rd and 4th would go at once; with none, all 12.
    times.forEach((at, index) => {
      const earliest = emittedAt + (Math.max(0, index + 1 - 2) / 4) * 1000;
      expect(at, `request ${index + 1}`).toBeGreaterThanOrEqual(earliest - clockSlackMs);
    });
    const records = await waitUntil("12 records", async () => {
      const list = await deliveriesOf(service, projectId, webhookId, "?limit=100");
      return list.length === 12 ? list : undefined;
    });
    expect(records.every((record) => record.success)).toBe(true);
  });

  it.each([
    ["a rate limit", { rate_limit: { per_second: 1, burst: 1 } }, 0],
    ["none", {}, 1],
  ])(
    "with %s, decides whether an emit may hand its delivery straight to the worker",
    async (name, fields, handed) => {
      const slug = `hand-over-${handed}`;
      const projectId = await createProject(service, slug);
      await webhookAt(projectId, `/${slug}`, fields);
      const lease = service.engine.handOverLease();
      expect(lease, name).toBeDefined();
      const { handedOver, queued } = await withTransaction(service.pool, (client) =>
        emitEvents(client, [{ eventType: "deployment.created", projectId, payload: {} }], lease),
      );
      expect(queued).toBe(1);
      // Only the claim takes a paced webhook's tokens: its delivery is queued for it, never handed over.
      expect(handedOver).toHaveLength(handed);
      service.engine.handOver(handedOver);
      await requestsAt(`/${slug}`, 1);
    },
  );

  it("keeps pacing a webhook while another transaction holds its row (an edit under way)", async () => {
    const projectId = await createProject(service, "paced-held");
    const webhookId = await webhookAt(projectId, "/paced-held", { rate_limit: { per_second: 50, burst: 3 } });
    const holder = await service.pool.connect();
    try {
      await holder.query("BEGIN");
      // What an update of the webhook takes: its row's lock, until it commits.
      await holder.query("SELECT 1 FROM webhooks WHERE id = $1 FOR NO KEY UPDATE", [webhookId]);
      await emitMany(service.pool, projectId, "deployment.created", 3);
      // The bucket is the webhook's pace row (migration 021), which only the claims lock.
      await requestsAt("/paced-held", 3);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  });

  it("gives a webhook whose limit has no pace row yet (set by an older replica) a full bucket, then paces it", async () => {
    const projectId = await createProject(service, "paced-unfilled");
    const webhookId = await webhookAt(projectId, "/paced-unfilled", {
      rate_limit: { per_second: 50, burst: 2 },
    });
    await service.pool.query("DELETE FROM webhook_pace WHERE webhook_id = $1", [webhookId]);
    await emitMany(service.pool, projectId, "deployment.created", 4);
    await requestsAt("/paced-unfilled", 4);
    const { rows } = await service.pool.query("SELECT tokens FROM webhook_pace WHERE webhook_id = $1", [
      webhookId,
    ]);
    expect(rows).toHaveLength(1);
  });

  it("is validated: a rate or burst out of range is a 400 and changes nothing", async () => {
    const projectId = await createProject(service, "paced-invalid");
    const bad = await service.api("POST", `/projects/${projectId}/webhooks`, {
      body: {
        url: `${receiver.url}/x`,
        events: ["deployment.created"],
        rate_limit: { per_second: 0, burst: 1 },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("rate_limit.per_second must be above 0");
    const list = await service.api("GET", `/projects/${projectId}/webhooks`);
    expect(list.body).toEqual([]);
  });
});

describe("a receiver's Retry-After", () => {
  it.each([
    ["429 with seconds", 429, () => "2"],
    ["503 with an HTTP date", 503, () => new Date(Date.now() + 2_000).toUTCString()],
  ])(
    "on a %s pauses that webhook only, and sends the delivery again then, not as a failure",
    async (_name, status, retryAfter) => {
      const slug = `throttled-${status}`;
      const projectId = await createProject(service, slug);
      const throttledId = await webhookAt(projectId, `/${slug}`);
      await webhookAt(projectId, `/${slug}-calm`);
      let pauseEndsAt = 0;
      receiver.on(`/${slug}`, (_request, res) => {
        if (pauseEndsAt > 0) return void res.writeHead(200).end();
        const header = retryAfter();
        pauseEndsAt = /^\d+$/.test(header) ? Date.now() + Number(header) * 1000 : Date.parse(header);
        res.writeHead(status, { "retry-after": header }).end();
      });
      await emitMany(service.pool, projectId, "deployment.created", 1);
      const paused = await waitUntil("the webhook paused", async (saw) => {
        const shown = await service.api("GET", `/projects/${projectId}/webhooks/${throttledId}`);
        saw(shown.body);
        return shown.body.throttled_until === null ? undefined : shown.body;
      });
      expect(paused.enabled).toBe(true);
      // Its later deliveries wait; the other webhook of the project gets its three meanwhile.
      await emitMany(service.pool, projectId, "deployment.created", 2);
      await requestsAt(`/${slug}-calm`, 3);
      const times = await requestsAt(`/${slug}`, 4);
      // Nothing reached it before the time it asked for.
      for (const at of times.slice(1)) expect(at).toBeGreaterThanOrEqual(pauseEndsAt - 5);
      const records = await waitUntil("3 records", async () => {
        const list = await deliveriesOf(service, projectId, throttledId, "?limit=100");
        return list.length === 3 ? list : undefined;
      });
      expect(records.map((record) => [record.success, record.attempt_number])).toEqual([
        [true, 1],
        [true, 1],
        [true, 1],
      ]);
      const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/webhook_operator_webhook_throttled_total\{reason="retry_after"\} [1-9]/);
    },
  );
});

describe("a hostile Retry-After", () => {
  it("of a year is cut to DELIVERY_RETRY_AFTER_MAX_SECONDS (1 h), and the webhook counts as throttled", async () => {
    const projectId = await createProject(service, "a-year");
    const webhookId = await webhookAt(projectId, "/a-year");
    receiver.on("/a-year", (_request, res) => res.writeHead(429, { "retry-after": "31536000" }).end());
    const askedAt = Date.now();
    await emitMany(service.pool, projectId, "deployment.created", 1);
    const paused = await waitUntil("the webhook paused", async () => {
      const shown = await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}`);
      return shown.body.throttled_until === null ? undefined : shown.body;
    });
    const until = Date.parse(paused.throttled_until);
    expect(until).toBeGreaterThan(askedAt + 3_500_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000);
    // Throttled, not failing: a gauge of paused webhooks, and no failed attempt recorded.
    await waitUntil("the throttled gauge", async (saw) => {
      const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
      const line = text.split("\n").find((l) => l.startsWith("webhook_operator_webhooks_throttled "));
      saw(line);
      return line === "webhook_operator_webhooks_throttled 1" ? true : undefined;
    });
    expect(await deliveriesOf(service, projectId, webhookId)).toEqual([]);
  });
});

describe("410 Gone", () => {
  it("disables a webhook that opted into auto-disable, and says why", async () => {
    const projectId = await createProject(service, "gone");
    const webhookId = await webhookAt(projectId, "/gone", {
      auto_disable: { after_failures: 100, min_duration_seconds: 0 },
    });
    receiver.on("/gone", (_request, res) => res.writeHead(410).end());
    await emitMany(service.pool, projectId, "deployment.created", 1);
    const disabled = await waitUntil("the webhook disabled", async (saw) => {
      const shown = await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}`);
      saw(shown.body);
      return shown.body.enabled === false ? shown.body : undefined;
    });
    expect(disabled.disabled_reason).toMatch(/^Disabled automatically: the receiver answered 410 Gone/);
  });

  it("is an ordinary failure for a webhook without auto-disable", async () => {
    const projectId = await createProject(service, "gone-kept");
    const webhookId = await webhookAt(projectId, "/gone-kept");
    receiver.on("/gone-kept", (_request, res) => res.writeHead(410).end());
    await emitMany(service.pool, projectId, "deployment.created", 1);
    const [record] = await waitUntil("the record", async () => {
      const list = await deliveriesOf(service, projectId, webhookId);
      return list.length === 1 ? list : undefined;
    });
    expect(record).toMatchObject({ success: false, status_code: 410 });
    const shown = await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}`);
    expect(shown.body).toMatchObject({ enabled: true, disabled_reason: null });
  });
});
