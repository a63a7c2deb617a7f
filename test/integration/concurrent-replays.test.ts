import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Many replays of one delivery at once, through real concurrent HTTP requests: each is its own attempt
// with its own number, none a 500 (issue 41: the losers of the retry index answered 500).

let service: TestService;
let receiver: Receiver;
let projectId: number;
const replays = 64;

beforeAll(async () => {
  receiver = await startReceiver();
  // The per-project bounds are raised so that every replay is let through: this file is about numbering.
  service = await startTestService({
    SYNC_SENDS_PER_PROJECT_CONCURRENCY: String(replays),
    DELIVERY_PER_WEBHOOK_CONCURRENCY: String(replays),
    DELIVERY_CONCURRENCY: String(replays * 2),
  });
  projectId = await createProject(service, "replays");
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

describe("concurrent replays of one delivery", () => {
  it(`numbers ${replays} simultaneous replays 2…${replays + 1}, each answered 200 with its own record`, async () => {
    const webhook = await createWebhook(service, projectId, {
      url: `${receiver.url}/replayed`,
      events: ["deployment.created"],
    });
    await emit(service.pool, projectId, "deployment.created");
    const [first] = await waitUntil("list.length === 1", async () => {
      const list = await deliveriesOf(service, projectId, webhook.id);
      return list.length === 1 ? list : undefined;
    });
    const retryPath = `/projects/${projectId}/webhooks/${webhook.id}/deliveries/${first?.id}/retry`;

    const answers = await Promise.all(Array.from({ length: replays }, () => service.api("POST", retryPath)));

    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const numbers = answers.map((answer) => answer.body.attempt_number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: replays }, (_, i) => i + 2));
    const records = await deliveriesOf(service, projectId, webhook.id, "?limit=100");
    expect(records).toHaveLength(replays + 1);
    expect(new Set(answers.map((answer) => answer.body.delivery_id)).size).toBe(replays);
  });
});
