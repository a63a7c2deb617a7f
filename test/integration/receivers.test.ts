import { createHmac } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import {
  buildGoRecipe,
  type RecipeReceiver,
  startRecipe,
  startTamperingProxy,
} from "../support/recipe-receivers.js";
import { startTestService, type TestService } from "../support/service.js";
import { locateCommand } from "../support/tools.js";

// The receivers of docs/receivers.md (Node's http and express with webhook-operator/verify, Python's
// and Go's standard libraries), each run as its own process, against real deliveries of the service:
// signed, replayed, unsigned, tampered on the way, signed with another secret, sent by a service whose
// clock is ten minutes behind or ahead. Every verifier must reach the same verdict. Then requests made
// by hand for the checks no real delivery fails (missing or malformed headers, a body that is no envelope).

const secret = "receiver-recipes-secret";
const python = locateCommand("python3", ["--version"], "Debian: apt-get install python3");
const go = locateCommand("go", ["version"], "https://go.dev/doc/install, or Debian's golang package");

const recipes = [
  {
    name: "Node, http",
    path: "/hooks",
    start: () => startRecipe(process.execPath, [docs("node/http.mjs")], secret),
  },
  {
    name: "Node, express",
    path: "/hooks",
    start: () => startRecipe(process.execPath, [docs("node/express.mjs")], secret),
  },
  {
    name: "Python",
    path: "/hooks",
    skip: python.path === undefined,
    start: () => startRecipe("python3", [docs("python/receiver.py")], secret),
  },
  {
    name: "Go",
    path: "/hooks",
    skip: go.path === undefined,
    start: async () => {
      const build = await buildGoRecipe();
      const receiver = await startRecipe(build.binary, [], secret);
      return { ...receiver, stop: () => receiver.stop().then(build.remove) };
    },
  },
];

function docs(file: string): string {
  return path.join("docs/receivers", file);
}

let service: TestService;
let proxy: Awaited<ReturnType<typeof startTamperingProxy>>;
beforeAll(async () => {
  [service, proxy] = await Promise.all([startTestService(), startTamperingProxy()]);
  projectId = await createProject(service, "receivers", "Receivers");
});
afterAll(async () => {
  await proxy?.close();
  await service?.close();
});
let projectId: number;

/** A webhook at `url`, signed with `webhookSecret` (unsigned without); its id. */
const webhookAt = async (url: string, webhookSecret: string | undefined) =>
  (
    await createWebhook(service, projectId, {
      url,
      events: ["deployment.succeeded"],
      ...(webhookSecret ? { secret: webhookSecret } : {}),
    })
  ).id;

/** Sends a test event to the webhook; the receiver's verdict is the status and body it answered. */
async function sendTestEvent(webhookId: number) {
  const sent = await service.api("POST", `/projects/${projectId}/webhooks/${webhookId}/test`);
  expect(sent.status).toBe(200);
  return delivery(webhookId, sent.body.delivery_id);
}

async function delivery(webhookId: number, deliveryId: number) {
  const record = await service.api(
    "GET",
    `/projects/${projectId}/webhooks/${webhookId}/deliveries/${deliveryId}`,
  );
  return record.body as {
    id: number;
    event_id: string;
    payload: string;
    status_code: number;
    response_body: string;
    request_headers: Record<string, string>;
  };
}

const verdict = (record: { status_code: number; response_body: string }) => ({
  status: record.status_code,
  answer: record.response_body.trim(),
});

function sign(timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

describe.each(recipes)("the $name receiver of docs/receivers.md", (recipe) => {
  let receiver: RecipeReceiver;
  const webhooks = { signed: 0, unsigned: 0, otherSecret: 0, tampered: 0 };
  beforeAll(async () => {
    if (recipe.skip) return;
    receiver = await recipe.start();
    const url = `${receiver.url}${recipe.path}`;
    webhooks.signed = await webhookAt(url, secret);
    webhooks.unsigned = await webhookAt(url, undefined);
    webhooks.otherSecret = await webhookAt(url, "another-secret");
    webhooks.tampered = await webhookAt(`${proxy.url}/${new URL(receiver.url).port}${recipe.path}`, secret);
  }, 300_000);
  afterAll(() => receiver?.stop());

  it.skipIf(recipe.skip)("accepts a signed delivery and knows its replays (same envelope id)", async () => {
    const first = await sendTestEvent(webhooks.signed);
    expect(verdict(first)).toEqual({ status: 200, answer: "ok" });

    // A replay through the API: a new attempt, newly signed, of the same event.
    const replay = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${webhooks.signed}/deliveries/${first.id}/retry`,
    );
    expect(replay.body).toMatchObject({ success: true, status_code: 200, attempt_number: 2 });
    const deliveries = await service.api(
      "GET",
      `/projects/${projectId}/webhooks/${webhooks.signed}/deliveries`,
    );
    const second = await delivery(webhooks.signed, deliveries.body[0].id);
    expect(second.event_id).toBe(first.event_id);
    expect(verdict(second)).toEqual({ status: 200, answer: "duplicate" });

    // The first request as recorded, sent again by someone who saw it: valid, and a duplicate.
    const again = await fetch(`${receiver.url}${recipe.path}`, {
      method: "POST",
      headers: first.request_headers,
      body: first.payload,
    });
    expect({ status: again.status, answer: (await again.text()).trim() }).toEqual({
      status: 200,
      answer: "duplicate",
    });
  });

  it.skipIf(recipe.skip)(
    "refuses unsigned, tampered and otherwise-signed deliveries, saying why",
    async () => {
      expect(verdict(await sendTestEvent(webhooks.unsigned))).toEqual({
        status: 400,
        answer: "missing_signature",
      });
      expect(verdict(await sendTestEvent(webhooks.tampered))).toEqual({
        status: 400,
        answer: "bad_signature",
      });
      expect(verdict(await sendTestEvent(webhooks.otherSecret))).toEqual({
        status: 400,
        answer: "bad_signature",
      });
    },
  );

  it.skipIf(recipe.skip)("refuses deliveries signed ten minutes ago or ten minutes ahead", async () => {
    // The service's clock (this process's Date) runs ten minutes off while it signs; timers stay real.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    try {
      vi.setSystemTime(Date.now() - 600_000);
      const old = await sendTestEvent(webhooks.signed);
      vi.setSystemTime(Date.now() + 1_200_000);
      const ahead = await sendTestEvent(webhooks.signed);
      expect(verdict(old)).toEqual({ status: 400, answer: "timestamp_too_old" });
      expect(verdict(ahead)).toEqual({ status: 400, answer: "timestamp_in_future" });
    } finally {
      vi.useRealTimers();
    }
  });

  const now = () => String(Math.floor(Date.now() / 1000));
  const envelope = '{"id":"0197","event_type":"deployment.succeeded","payload":{}}';
  it.skipIf(recipe.skip).each([
    { reason: "missing_timestamp", headers: () => ({ "X-Webhook-Signature": sign(now(), envelope) }) },
    {
      reason: "malformed_timestamp",
      headers: () => ({ "X-Webhook-Timestamp": "soon", "X-Webhook-Signature": sign("soon", envelope) }),
    },
    {
      reason: "malformed_signature",
      headers: () => ({ "X-Webhook-Timestamp": now(), "X-Webhook-Signature": "sha256=abc" }),
    },
    { reason: "invalid_json", body: "{not json" },
    { reason: "invalid_envelope", body: '{"id":"0197","event_type":"deployment.succeeded"}' },
    { reason: "invalid_envelope", body: "[]" },
  ] as { reason: string; body?: string; headers?: () => Record<string, string> }[])(
    "answers $reason to a request made by hand",
    async ({ reason, body = envelope, headers }) => {
      const timestamp = now();
      const response = await fetch(`${receiver.url}${recipe.path}`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          ...(headers?.() ?? {
            "X-Webhook-Timestamp": timestamp,
            "X-Webhook-Signature": sign(timestamp, body),
          }),
        },
        body,
      });
      expect({ status: response.status, answer: (await response.text()).trim() }).toEqual({
        status: 400,
        answer: reason,
      });
    },
  );
});
