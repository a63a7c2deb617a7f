import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook, emit } from "../support/api-fixtures.js";
import { countAcquires } from "../support/pool-acquires.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Test events and replays are sent while the request waits: they get a share of the engine's slots
// and a pace per project, and over either the API answers 429 with Retry-After, recording nothing
// (issue 41: one tenant's test events at a receiver that never answered held 10,300 sends open).

let receiver: Receiver;
let service: TestService;
let paced: TestService;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.on("/hang", () => {}); // never answers; the sends end by DELIVERY_TIMEOUT_MS
  [service, paced] = await Promise.all([
    startTestService({
      DELIVERY_TIMEOUT_MS: "4000",
      SYNC_SENDS_PER_PROJECT_CONCURRENCY: "2",
      DELIVERY_PER_WEBHOOK_CONCURRENCY: "3",
      SYNC_SENDS_PER_PROJECT_PER_MINUTE: "0",
    }),
    startTestService({ SYNC_SENDS_PER_PROJECT_PER_MINUTE: "3", SYNC_SENDS_PER_PROJECT_PER_DAY: "0" }),
  ]);
});
afterAll(async () => {
  await receiver.close();
  await Promise.all([service?.close(), paced?.close()]);
});

/** Rows of the tables a send writes: a refused one must leave them as they are. */
async function recorded(on: TestService): Promise<{ events: number; deliveries: number }> {
  const { rows } = await on.pool.query<{ events: number; deliveries: number }>(
    "SELECT (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM deliveries) AS deliveries",
  );
  return rows[0] as { events: number; deliveries: number };
}

const hanging = () => receiver.requests.filter((r) => r.path === "/hang").length;

function expectTooMany(
  answer: Awaited<ReturnType<TestService["api"]>>,
  message: string,
  retryAfter: (seconds: number) => void,
) {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ error: { code: "too_many_requests", message: expect.any(String) } });
  expect(answer.body.error.message).toContain(message);
  retryAfter(Number(answer.headers.get("retry-after")));
}

describe("test events and replays in flight", () => {
  it("answers 429 past a project's share, recording nothing, while another project still sends", async () => {
    const a = await createProject(service, "tenant-a");
    const b = await createProject(service, "tenant-b");
    const slow = await createWebhook(service, a, {
      url: `${receiver.url}/hang`,
      events: ["deployment.created"],
    });
    const other = await createWebhook(service, a, {
      url: `${receiver.url}/hang`,
      events: ["deployment.created"],
    });
    const healthy = await createWebhook(service, b, {
      url: `${receiver.url}/ok`,
      events: ["deployment.created"],
    });
    const before = hanging();
    const open = [
      service.api("POST", `/projects/${a}/webhooks/${slow.id}/test`),
      service.api("POST", `/projects/${a}/webhooks/${other.id}/test`),
    ];
    await waitUntil("hanging() >= before + 2", async () => (hanging() >= before + 2 ? true : undefined));
    const counts = await recorded(service);

    // Over the project's share, whichever of its webhooks: a test event and a replay alike.
    expectTooMany(
      await service.api("POST", `/projects/${a}/webhooks/${slow.id}/test`),
      `Project ${a} already has 2 test events and replays waiting`,
      (seconds) => expect(seconds).toBe(1),
    );
    expect(await recorded(service)).toEqual(counts);
    expect(hanging()).toBe(before + 2);
    // A key of another project learns nothing of A's sends: A's webhook is not found, as ever.
    const keyOfB = await service.api("POST", "/api-keys", { body: { name: "b", project_ids: [b] } });
    const asB = await service.api("POST", `/projects/${a}/webhooks/${slow.id}/test`, {
      key: keyOfB.body.key,
    });
    expect(asB.status).toBe(404);

    // Another project is not held back by it.
    const fromB = await service.api("POST", `/projects/${b}/webhooks/${healthy.id}/test`);
    expect(fromB.status).toBe(200);
    expect(fromB.body.success).toBe(true);

    // Once they end (by the delivery timeout), the project sends again.
    const ended = await Promise.all(open);
    expect(ended.map((answer) => answer.body.error_message)).toEqual([
      expect.stringContaining("Request timeout after 4 seconds"),
      expect.stringContaining("Request timeout after 4 seconds"),
    ]);
    receiver.on("/hang", (_request, res) => res.writeHead(204).end());
    const again = await service.api("POST", `/projects/${a}/webhooks/${slow.id}/test`);
    receiver.on("/hang", () => {});
    expect(again.status).toBe(200);

    // A replay over the share is refused the same way.
    const replays = await Promise.all(
      [1, 2, 3].map(() =>
        service.api("POST", `/projects/${a}/webhooks/${slow.id}/deliveries/${again.body.delivery_id}/retry`),
      ),
    );
    expect(replays.map((answer) => answer.status).sort()).toEqual([200, 200, 429]);
  });

  it("counts the workers' deliveries of a webhook against its limit: a test event over it is a 429", async () => {
    const project = await createProject(service, "busy");
    const webhook = await createWebhook(service, project, {
      url: `${receiver.url}/hang`,
      events: ["deployment.created"],
    });
    const before = hanging();
    // The worker sends the webhook's first deliveries two at a time (its starting limit), which
    // with one test event makes the webhook's 3 (DELIVERY_PER_WEBHOOK_CONCURRENCY).
    for (let i = 0; i < 4; i++) await emit(service.pool, project, "deployment.created");
    await waitUntil("hanging() >= before + 2", async () => (hanging() >= before + 2 ? true : undefined));
    const test = service.api("POST", `/projects/${project}/webhooks/${webhook.id}/test`);
    await waitUntil("hanging() >= before + 3", async () => (hanging() >= before + 3 ? true : undefined));
    expectTooMany(
      await service.api("POST", `/projects/${project}/webhooks/${webhook.id}/test`),
      `Webhook ${webhook.id} already has 3 deliveries in flight on this replica`,
      (seconds) => expect(seconds).toBe(1),
    );
    expect((await test).status).toBe(200);
  });
});

describe("the pace of a project's test events and replays", () => {
  it("lets a burst of SYNC_SENDS_PER_PROJECT_PER_MINUTE through, then answers 429 with the wait", async () => {
    const project = await createProject(paced, "paced");
    const other = await createProject(paced, "unpaced");
    const webhook = await createWebhook(paced, project, {
      url: `${receiver.url}/ok`,
      events: ["deployment.created"],
    });
    const elsewhere = await createWebhook(paced, other, {
      url: `${receiver.url}/ok`,
      events: ["deployment.created"],
    });
    for (let i = 0; i < 3; i++)
      expect((await paced.api("POST", `/projects/${project}/webhooks/${webhook.id}/test`)).status).toBe(200);
    const counts = await recorded(paced);
    expectTooMany(
      await paced.api("POST", `/projects/${project}/webhooks/${webhook.id}/test`),
      "its 3 test events and replays per minute",
      // One token every 20 s: the next comes within that.
      (seconds) => expect([...Array(20).keys()].map((i) => i + 1)).toContain(seconds),
    );
    expect(await recorded(paced)).toEqual(counts);
    expect((await paced.api("POST", `/projects/${other}/webhooks/${elsewhere.id}/test`)).status).toBe(200);
  });

  it("refuses a project over its pace before any query: a refusal costs less than the send it refuses", async () => {
    const project = await createProject(paced, "refused-cheaply");
    const webhook = await createWebhook(paced, project, {
      url: `${receiver.url}/ok`,
      events: ["deployment.created"],
    });
    const test = `/projects/${project}/webhooks/${webhook.id}/test`;
    for (let i = 0; i < 3; i++) expect((await paced.api("POST", test)).status).toBe(200);
    const acquired = countAcquires(paced);
    const statuses = new Set<number>();
    for (let i = 0; i < 20; i++) statuses.add((await paced.api("POST", test)).status);
    expect(statuses).toEqual(new Set([429]));
    // The key verified moments ago is remembered (API_KEY_CACHE_TTL_MS); the project's pace is in
    // memory. Looked up first, the webhook took 2 connections a refusal (40 for these 20).
    expect(acquired.stop()).toBeLessThanOrEqual(1);
  });
});
