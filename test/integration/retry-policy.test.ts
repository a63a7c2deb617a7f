import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { metrics } from "../../src/metrics.js";
import { updateWebhook } from "../../src/webhooks/store.js";
import { createProject, createWebhook, emit } from "../support/api-fixtures.js";
import { createTestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Opt-in automatic retries through the real service, its workers and real receivers. The backoff
// schedule is configuration (DELIVERY_RETRY_DELAYS_MS): short here, so a chain of attempts takes
// milliseconds; what is tested (a durable scheduled row, the numbering, the limits) is the same.
const fastRetries = { DELIVERY_RETRY_DELAYS_MS: "20,20,20,20,20", DELIVERY_POLL_INTERVAL_MS: "50" };

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  receiver = await startReceiver();
  // The default send timeout: each test counts the answers its receiver gave, and on a loaded machine
  // an answer can take longer than a short timeout, which would record a timeout in its place.
  service = await startTestService(fastRetries);
  projectId = await createProject(service, "retries", "Retries");
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

/** A receiver path answering with the given statuses in turn, the last one from then on. */
function answers(path: string, statuses: number[]): void {
  let call = 0;
  receiver.on(path, (_request, res) => {
    const status = statuses[Math.min(call++, statuses.length - 1)] ?? 200;
    res.writeHead(status).end();
  });
}

/** A webhook at `path` on the receiver, subscribed to deployment.failed; its id. */
const webhookAt = async (path: string, fields: Record<string, unknown> = {}) =>
  (
    await createWebhook(service, projectId, {
      url: `${receiver.url}${path}`,
      events: ["deployment.failed"],
      ...fields,
    })
  ).id;

const emitFailure = () => emit(service.pool, projectId, "deployment.failed", { deployment_id: 7 });

async function attempts(webhookId: number, on: TestService = service) {
  const list = await on.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries`);
  expect(list.status).toBe(200);
  return (list.body as Array<Record<string, unknown>>).sort(
    (a, b) => Number(a.attempt_number) - Number(b.attempt_number),
  );
}

/** What the webhook has not finished: deliveries queued or in flight, and retries waiting ('scheduled'). */
async function unfinished(webhookId: number, on: TestService = service) {
  const { rows } = await on.pool.query<{ state: string; attempt_number: number }>(
    `SELECT state, attempt_number FROM deliveries WHERE webhook_id = $1 AND delivered_at IS NULL
     UNION ALL
     SELECT 'scheduled', attempt_number FROM scheduled_retries WHERE webhook_id = $1`,
    [webhookId],
  );
  return rows;
}

async function waitForAttempts(webhookId: number, count: number, on: TestService = service) {
  return waitUntil("list.length >= count && (await unfinished(webhookId, on)).length === 0", async () => {
    const list = await attempts(webhookId, on);
    return list.length >= count && (await unfinished(webhookId, on)).length === 0 ? list : undefined;
  });
}

const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

describe("retry_policy in the API", () => {
  it("is null by default, set on create, changed and removed by PUT", async () => {
    const plain = await service.api("GET", `/projects/${projectId}/webhooks/${await webhookAt("/p0")}`);
    expect(plain.body).toMatchObject({
      retry_policy: null,
      auto_disable: null,
      disabled_reason: null,
      disabled_at: null,
    });

    const id = await webhookAt("/p1", { retry_policy: { max_attempts: 4 } });
    const path = `/projects/${projectId}/webhooks/${id}`;
    expect((await service.api("GET", path)).body.retry_policy).toEqual({ max_attempts: 4 });
    const changed = await service.api("PUT", path, { body: { retry_policy: { max_attempts: 2 } } });
    expect(changed.body.retry_policy).toEqual({ max_attempts: 2 });
    // Omitted: kept.
    expect((await service.api("PUT", path, { body: { enabled: true } })).body.retry_policy).toEqual({
      max_attempts: 2,
    });
    expect((await service.api("PUT", path, { body: { retry_policy: null } })).body.retry_policy).toBeNull();
  });

  it.each([
    [{ retry_policy: { max_attempts: 0 } }, "retry_policy.max_attempts must be at least 1"],
    [{ retry_policy: { max_attempts: 7 } }, "retry_policy.max_attempts must be at most 6"],
    [{ retry_policy: { max_attempts: 2.5 } }, "retry_policy.max_attempts must be a whole number"],
    [{ retry_policy: { max_attempts: "3" } }, "retry_policy.max_attempts must be a number"],
    [{ retry_policy: { max_attempts: 3, delay: 1 } }, "delay"],
    [{ retry_policy: 3 }, "retry_policy must be an object"],
    [{ auto_disable: { after_failures: 5 } }, "auto_disable.min_duration_seconds is required"],
    [
      { auto_disable: { after_failures: 5, min_duration_seconds: "60" } },
      "auto_disable.min_duration_seconds must be a number",
    ],
    [{ auto_disable: { after_failures: 0, min_duration_seconds: 60 } }, "at least 1"],
    [{ auto_disable: { after_failures: 3, min_duration_seconds: -1 } }, "at least 0"],
  ])("answers 400 to %j on create and update, and changes nothing", async (fields, message) => {
    const created = await service.api("POST", `/projects/${projectId}/webhooks`, {
      body: { url: `${receiver.url}/bad`, events: ["deployment.failed"], ...fields },
    });
    expect(created.status).toBe(400);
    expect(JSON.stringify(created.body.error)).toContain(message);

    const id = await webhookAt("/p2", { retry_policy: { max_attempts: 2 } });
    const path = `/projects/${projectId}/webhooks/${id}`;
    const before = (await service.api("GET", path)).body;
    const updated = await service.api("PUT", path, { body: { url: `${receiver.url}/other`, ...fields } });
    expect(updated.status).toBe(400);
    expect(JSON.stringify(updated.body.error)).toContain(message);
    expect((await service.api("GET", path)).body).toEqual(before);
  });
});

describe("automatic retries", () => {
  it("without a policy sends one attempt and schedules nothing (the spec's default)", async () => {
    answers("/no-policy", [500]);
    const id = await webhookAt("/no-policy");
    await emitFailure();
    const [only, ...rest] = await waitForAttempts(id, 1);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ attempt_number: 1, success: false, status_code: 500 });
    expect(await unfinished(id)).toEqual([]);
    expect(requestsTo("/no-policy")).toHaveLength(1);
  });

  it("retries a failing delivery up to max_attempts, each a new record of the same event numbered +1", async () => {
    answers("/always-500", [500]);
    const id = await webhookAt("/always-500", { retry_policy: { max_attempts: 3 } });
    const scheduledBefore = (await metrics.retriesScheduled.get()).values[0]?.value ?? 0;
    const emitted = await emitFailure();
    const list = await waitForAttempts(id, 3);
    expect(list.map((d) => [d.attempt_number, d.success, d.status_code])).toEqual([
      [1, false, 500],
      [2, false, 500],
      [3, false, 500],
    ]);
    expect(new Set(list.map((d) => d.event_id))).toEqual(new Set([emitted.envelope.id]));
    expect(new Set(list.map((d) => d.id)).size).toBe(3);
    // The chain ends at max_attempts: nothing is left waiting, and the receiver got three requests,
    // the same envelope each time.
    expect(await unfinished(id)).toEqual([]);
    const received = requestsTo("/always-500");
    expect(received.map((r) => r.body)).toEqual([emitted.body, emitted.body, emitted.body]);
    expect(received.map((r) => r.headers["x-webhook-delivery"])).toEqual(list.map((d) => String(d.id)));
    expect((await metrics.retriesScheduled.get()).values[0]?.value).toBe(scheduledBefore + 2);
  });

  it("stops at the first success", async () => {
    answers("/recovers", [503, 200]);
    const id = await webhookAt("/recovers", { retry_policy: { max_attempts: 6 } });
    await emitFailure();
    const list = await waitForAttempts(id, 2);
    expect(list.map((d) => [d.attempt_number, d.success])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(await unfinished(id)).toEqual([]);
    expect(requestsTo("/recovers")).toHaveLength(2);
  });

  it("numbers a retry above a manual retry made while it waited, and counts that toward max_attempts", async () => {
    const slow = await startTestService(
      { DELIVERY_RETRY_DELAYS_MS: "600000,600000,600000,600000,600000", DELIVERY_POLL_INTERVAL_MS: "50" },
      { database: undefined },
    );
    try {
      const project = await createProject(slow, "m", "M");
      answers("/manual", [500]);
      const { id } = await createWebhook(slow, project, {
        url: `${receiver.url}/manual`,
        events: ["deployment.failed"],
        retry_policy: { max_attempts: 3 },
      });
      const emitted = await emit(slow.pool, project, "deployment.failed", {});
      // Attempt 1 failed; attempt 2 waits ten minutes, outside the queue.
      const waiting = await waitUntil("the scheduled retry", async () => {
        const { rows } = await slow.pool.query(
          "SELECT attempt_number, event_id FROM scheduled_retries WHERE webhook_id = $1",
          [id],
        );
        return rows[0];
      });
      expect(waiting).toEqual({ attempt_number: 2, event_id: emitted.envelope.id });
      const first = (await slow.api("GET", `/projects/${project}/webhooks/${id}/deliveries`)).body[0];
      const replay = await slow.api(
        "POST",
        `/projects/${project}/webhooks/${id}/deliveries/${first.id}/retry`,
      );
      expect(replay.body).toMatchObject({ success: false, attempt_number: 2 });

      // Ten minutes pass: the waiting retry is numbered above the manual one, and is the third attempt.
      await slow.pool.query("UPDATE scheduled_retries SET due_at = clock_timestamp() WHERE webhook_id = $1", [
        id,
      ]);
      const list = await waitUntil("found.length === 3", async () => {
        const found = (await slow.api("GET", `/projects/${project}/webhooks/${id}/deliveries`)).body;
        return found.length === 3 ? found : undefined;
      });
      expect(list.map((d: Record<string, unknown>) => d.attempt_number)).toEqual([3, 2, 1]);
      // max_attempts (3) reached: nothing more waits.
      expect(await unfinished(id, slow)).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe("waiting retries", () => {
  it("go with their webhook when it is deleted", async () => {
    const id = await webhookAt("/deleted", { retry_policy: { max_attempts: 2 } });
    const emitted = await emitFailure();
    await service.pool.query(
      `INSERT INTO scheduled_retries (webhook_id, event_id, event_type, attempt_number, due_at)
       VALUES ($1, $2, 'deployment.failed', 2, clock_timestamp() + interval '1 hour')`,
      [id, emitted.envelope.id],
    );
    expect((await service.api("DELETE", `/projects/${projectId}/webhooks/${id}`)).status).toBe(204);
    const { rows } = await service.pool.query(
      "SELECT count(*)::int AS n FROM scheduled_retries WHERE webhook_id = $1",
      [id],
    );
    expect(rows[0].n).toBe(0);
  });
});

describe("a scheduled retry survives a restart", () => {
  it("is sent by the next process once due", async () => {
    const database = await createTestDatabase();
    const env = {
      DELIVERY_RETRY_DELAYS_MS: "600000,600000,600000,600000,600000",
      DELIVERY_POLL_INTERVAL_MS: "50",
    };
    let first: TestService | undefined = await startTestService(env, { database });
    let second: TestService | undefined;
    try {
      const project = await createProject(first, "r", "R");
      answers("/restart", [500, 200]);
      const { id } = await createWebhook(first, project, {
        url: `${receiver.url}/restart`,
        events: ["deployment.failed"],
        retry_policy: { max_attempts: 2 },
      });
      await emit(first.pool, project, "deployment.failed", {});
      await waitUntil('(await unfinished(id, first)).some((r) => r.state === "scheduled")', async () =>
        (await unfinished(id, first)).some((r) => r.state === "scheduled") ? true : undefined,
      );
      await first.close();
      first = undefined;

      second = await startTestService(env, { database });
      expect(await unfinished(id, second)).toEqual([{ state: "scheduled", attempt_number: 2 }]);
      // Ten minutes pass (the retry's due time is moved instead of waiting for it).
      await second.pool.query(
        "UPDATE scheduled_retries SET due_at = clock_timestamp() WHERE webhook_id = $1",
        [id],
      );
      const on = second;
      const list = await waitUntil("found.length === 2", async () => {
        const found = (await on.api("GET", `/projects/${project}/webhooks/${id}/deliveries`)).body;
        return found.length === 2 ? found : undefined;
      });
      expect(list.map((d: Record<string, unknown>) => [d.attempt_number, d.success])).toEqual([
        [2, true],
        [1, false],
      ]);
      expect(requestsTo("/restart")).toHaveLength(2);
    } finally {
      await first?.close();
      await second?.close();
      await database.drop();
    }
  });
});

describe("deliveries queued for a webhook that is then disabled", () => {
  it("are not sent: each is recorded as a failed attempt saying so, and can be retried once enabled", async () => {
    const id = await webhookAt("/disabled-later");
    await withTransaction(service.pool, async (client) => {
      await emitEvent(client, { eventType: "deployment.failed", projectId, payload: {} });
      await updateWebhook(client, testSecretBox(), projectId, id, { enabled: false });
    });
    const [notSent] = await waitForAttempts(id, 1);
    expect(notSent).toMatchObject({ attempt_number: 1, success: false, status_code: 0 });
    expect(notSent?.error_message).toBe(
      `Not sent: webhook ${id} was disabled after this delivery was queued. Enable it and retry this delivery to send it.`,
    );
    expect(requestsTo("/disabled-later")).toHaveLength(0);

    const path = `/projects/${projectId}/webhooks/${id}`;
    expect((await service.api("PUT", path, { body: { enabled: true } })).status).toBe(200);
    const retried = await service.api("POST", `${path}/deliveries/${notSent?.id}/retry`);
    expect(retried.body).toMatchObject({ success: true, attempt_number: 2 });
    expect(requestsTo("/disabled-later")).toHaveLength(1);
  });
});

describe("auto_disable", () => {
  const disabledTotal = async () => (await metrics.webhooksAutoDisabled.get()).values[0]?.value ?? 0;

  it("disables a webhook after N failed deliveries in a row, records why, and enabling clears it", async () => {
    answers("/dead", [500]);
    const id = await webhookAt("/dead", { auto_disable: { after_failures: 3, min_duration_seconds: 0 } });
    const path = `/projects/${projectId}/webhooks/${id}`;
    const countedBefore = await disabledTotal();
    // Two failures: still enabled.
    await emitFailure();
    await emitFailure();
    await waitForAttempts(id, 2);
    expect((await service.api("GET", path)).body).toMatchObject({ enabled: true, disabled_reason: null });
    await emitFailure();
    const disabled = await waitUntil("not webhook.enabled", async () => {
      const webhook = (await service.api("GET", path)).body;
      return webhook.enabled ? undefined : webhook;
    });
    expect(disabled.disabled_reason).toMatch(
      /^Disabled automatically: 3 deliveries in a row failed since \d{4}-\d\d-\d\dT[\d:.]+Z \(auto_disable: after 3 failures over at least 0 s\)\./,
    );
    expect(Date.parse(disabled.disabled_at)).not.toBeNaN();
    expect(await disabledTotal()).toBe(countedBefore + 1);
    // Disabled: new events queue nothing for it.
    await emitFailure();
    const { rows } = await service.pool.query(
      "SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1",
      [id],
    );
    expect(rows[0].n).toBe(3);
    expect(requestsTo("/dead")).toHaveLength(3);

    const enabled = await service.api("PUT", path, { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    // The run starts again from zero: two more failures leave it enabled.
    await emitFailure();
    await emitFailure();
    await waitForAttempts(id, 5);
    expect((await service.api("GET", path)).body.enabled).toBe(true);
    expect(await disabledTotal()).toBe(countedBefore + 1);
  });

  it("a success ends the run of failures", async () => {
    answers("/flaky", [500, 500, 200, 500, 500]);
    const id = await webhookAt("/flaky", {
      auto_disable: { after_failures: 3, min_duration_seconds: 0 },
    });
    for (let i = 0; i < 5; i++) {
      await emitFailure();
      await waitForAttempts(id, i + 1);
    }
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body.enabled).toBe(true);
    const { rows } = await service.pool.query("SELECT consecutive_failures FROM webhooks WHERE id = $1", [
      id,
    ]);
    expect(rows[0].consecutive_failures).toBe(2);
  });

  it("waits for min_duration_seconds however many deliveries failed", async () => {
    answers("/young", [500]);
    const id = await webhookAt("/young", {
      auto_disable: { after_failures: 2, min_duration_seconds: 3600 },
    });
    for (let i = 0; i < 4; i++) await emitFailure();
    await waitForAttempts(id, 4);
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body.enabled).toBe(true);
    // The failures began an hour ago: the next one disables it.
    await service.pool.query(
      "UPDATE webhooks SET failing_since = failing_since - interval '1 hour' WHERE id = $1",
      [id],
    );
    await emitFailure();
    const webhook = await waitUntil("not found.enabled", async () => {
      const found = (await service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body;
      return found.enabled ? undefined : found;
    });
    expect(webhook.disabled_reason).toContain("5 deliveries in a row failed");
  });

  it("schedules no retry for the failure that disables the webhook", async () => {
    answers("/dead-retrying", [500]);
    const id = await webhookAt("/dead-retrying", {
      retry_policy: { max_attempts: 6 },
      auto_disable: { after_failures: 2, min_duration_seconds: 0 },
    });
    await emitFailure();
    // Attempt 1 fails, attempt 2 (its retry) fails and disables: no attempt 3 is scheduled.
    const list = await waitForAttempts(id, 2);
    expect(list.map((d) => d.attempt_number)).toEqual([1, 2]);
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${id}`)).body.enabled).toBe(false);
    expect(await unfinished(id)).toEqual([]);
  });
});
