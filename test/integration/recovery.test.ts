import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metrics } from "../../src/metrics.js";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Bulk recovery: every failed event of a webhook since T goes back through the queue once, as a new
// attempt, against a real receiver and the real workers.

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "200" });
  projectId = await createProject(service, "shop", "Shop");
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

type Delivery = {
  id: number;
  event_id: string;
  attempt_number: number;
  success: boolean;
  event_type: string;
};

/** A webhook at `path` on the receiver, answering `status` until told otherwise. */
async function failingWebhook(path: string): Promise<{ id: number; answer: (status: number) => void }> {
  let status = 503;
  receiver.on(path, (_req, res) => res.writeHead(status).end());
  const created = await createWebhook(service, projectId, {
    url: `${receiver.url}${path}`,
    events: ["deployment.succeeded", "deployment.failed"],
  });
  return { id: created.id, answer: (next) => (status = next) };
}

async function settled(webhookId: number, count: number): Promise<Delivery[]> {
  return waitUntil("list.length === count && rows.length === 0", async () => {
    const list = await deliveriesOf(service, projectId, webhookId, "?limit=100");
    const { rows } = await service.pool.query(
      "SELECT 1 FROM deliveries WHERE webhook_id = $1 AND delivered_at IS NULL",
      [webhookId],
    );
    return list.length === count && rows.length === 0 ? list : undefined;
  });
}

const recover = (webhookId: number, body: Record<string, unknown>) =>
  service.api("POST", `/projects/${projectId}/webhooks/${webhookId}/recover`, { body });

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

describe("POST …/webhooks/{id}/recover", () => {
  it("times a recovered attempt's lag from its recovery, not from its event's age", async () => {
    // The delivery lag says how long due work waited for a worker (the DeliveryLagHigh alert: a queue
    // backed up). An event recorded an hour ago and recovered now waited for nobody.
    const webhook = await failingWebhook("/recover-lag");
    const event = await emit(service.pool, projectId, "deployment.succeeded");
    await settled(webhook.id, 1);
    await service.pool.query("UPDATE events SET created_at = created_at - interval '1 hour' WHERE id = $1", [
      event.envelope.id,
    ]);
    await service.pool.query(
      "UPDATE deliveries SET created_at = created_at - interval '1 hour' WHERE webhook_id = $1",
      [webhook.id],
    );
    webhook.answer(200);
    const lag = async () => {
      const { values } = await metrics.deliveryLag.get();
      const count = values.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
      // The histogram's largest finite bucket is 30 s: an hour's lag counts only above it.
      const within30s =
        values.find((v) => v.metricName?.endsWith("_bucket") && v.labels.le === 30)?.value ?? 0;
      return { count, over30s: count - within30s };
    };
    const before = await lag();

    expect(
      (await recover(webhook.id, { since: new Date(Date.now() - 7_200_000).toISOString() })).body.queued,
    ).toBe(1);
    await settled(webhook.id, 2);
    const after = await lag();
    expect(after.count).toBe(before.count + 1);
    expect(after.over30s).toBe(before.over30s);
  });

  it("queues the latest failed attempt of each event once, as a new attempt the workers send", async () => {
    const webhook = await failingWebhook("/recover-all");
    const events = [
      await emit(service.pool, projectId, "deployment.succeeded"),
      await emit(service.pool, projectId, "deployment.failed"),
    ];
    await settled(webhook.id, 2);
    webhook.answer(200);

    const response = await recover(webhook.id, { since: hourAgo() });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ queued: 2, event_type: null, limit: 10_000 });
    const list = await settled(webhook.id, 4);
    const retried = list.filter((d) => d.attempt_number === 2);
    expect(retried.map((d) => d.event_id).sort()).toEqual(events.map((e) => e.envelope.id).sort());
    expect(retried.every((d) => d.success)).toBe(true);
    const arrived = receiver.requests
      .filter((r) => r.path === "/recover-all")
      .map((r) => JSON.parse(r.body).id);
    expect(arrived.sort()).toEqual(
      [...events.map((e) => e.envelope.id), ...events.map((e) => e.envelope.id)].sort(),
    );

    // Everything succeeded since: a second recovery queues nothing.
    expect((await recover(webhook.id, { since: hourAgo() })).body.queued).toBe(0);
  });

  it("leaves out events whose later attempt succeeded, and filters by event type and window", async () => {
    const webhook = await failingWebhook("/recover-some");
    const replayed = await emit(service.pool, projectId, "deployment.succeeded");
    const other = await emit(service.pool, projectId, "deployment.failed");
    const [, first] = await settled(webhook.id, 2);
    expect(first?.event_id).toBe(replayed.envelope.id);
    webhook.answer(200);
    const retry = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${webhook.id}/deliveries/${first?.id}/retry`,
    );
    expect(retry.body).toMatchObject({ success: true, attempt_number: 2 });
    webhook.answer(503);

    // A window that ended before the failures: nothing.
    expect(
      (await recover(webhook.id, { since: hourAgo(), until: new Date(Date.now() - 1_800_000).toISOString() }))
        .body.queued,
    ).toBe(0);
    // Another event type: nothing.
    expect(
      (await recover(webhook.id, { since: hourAgo(), event_type: "deployment.ready" })).body.queued,
    ).toBe(0);
    // The replayed event succeeded later; only the other one goes, and fails again.
    const response = await recover(webhook.id, { since: hourAgo(), event_type: "deployment.failed" });
    expect(response.body.queued).toBe(1);
    const list = await settled(webhook.id, 4);
    expect(list[0]).toMatchObject({ event_id: other.envelope.id, attempt_number: 2, success: false });
  });

  it("does not queue an event twice while its attempt is on its way", async () => {
    const webhook = await failingWebhook("/recover-twice");
    await emit(service.pool, projectId, "deployment.failed");
    await settled(webhook.id, 1);
    // The receiver holds its answer: the recovered attempt stays in flight meanwhile.
    const held: Array<() => void> = [];
    receiver.on("/recover-twice", (_req, res) => held.push(() => res.writeHead(200).end()));
    expect((await recover(webhook.id, { since: hourAgo() })).body.queued).toBe(1);
    await waitUntil("held.length === 1", async () => (held.length === 1 ? true : undefined));
    expect((await recover(webhook.id, { since: hourAgo() })).body.queued).toBe(0);
    for (const answer of held) answer();
    const list = await settled(webhook.id, 2);
    expect(list[0]).toMatchObject({ attempt_number: 2, success: true });
  });

  it("answers 400 for bad input, queues nothing for an empty window, and 409 for a disabled webhook", async () => {
    const webhook = await failingWebhook("/recover-refused");
    await emit(service.pool, projectId, "deployment.failed");
    await settled(webhook.id, 1);
    for (const [body, path] of [
      [{}, "body.since"],
      [{ since: "yesterday" }, "body.since"],
      [{ since: hourAgo(), until: "now" }, "body.until"],
      [{ since: hourAgo(), event_type: "" }, "body.event_type"],
      [{ since: hourAgo(), extra: 1 }, "body"],
    ] as const) {
      const response = await recover(webhook.id, body);
      expect(response.status).toBe(400);
      expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    // A window with nothing in it: since in the future, or until not after since.
    const future = new Date(Date.now() + 60_000).toISOString();
    const since = hourAgo();
    for (const body of [
      { since: future },
      { since, until: since },
      { since, until: new Date(0).toISOString() },
    ]) {
      const response = await recover(webhook.id, body);
      expect(response.status).toBe(202);
      expect(response.body.queued).toBe(0);
    }
    await service.api("PUT", `/projects/${projectId}/webhooks/${webhook.id}`, { body: { enabled: false } });
    const disabled = await recover(webhook.id, { since: hourAgo() });
    expect(disabled.status).toBe(409);
    expect(disabled.body.error.message).toMatch(/disabled/);
    expect(await deliveriesOf(service, projectId, webhook.id, "?limit=100")).toHaveLength(1);
    const { rows } = await service.pool.query("SELECT 1 FROM deliveries WHERE webhook_id = $1", [webhook.id]);
    expect(rows).toHaveLength(1);
  });

  it("is refused for a webhook outside a scoped key's projects", async () => {
    const webhook = await failingWebhook("/recover-scoped");
    const other = await createProject(service, "other", "Other");
    const scoped = await service.api("POST", "/api-keys", {
      body: { name: "other-only", project_ids: [other] },
    });
    const response = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/recover`, {
      key: scoped.body.key,
      body: { since: hourAgo() },
    });
    expect(response.status).toBe(404);
  });
});
