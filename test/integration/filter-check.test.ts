import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import type { DeploymentEventType } from "../../src/event-types.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { docSection } from "../support/docs.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// Checking a webhook's filters without a cluster: the check's verdict for an example workload is the
// one a real event of that workload gets when it is recorded (the emit statement, on a real Postgres),
// and its reasons name each part that leaves the event out.

let service: TestService;
let receiver: Receiver;
let projectId: number;
let webhookId: number;

const filters = {
  environments: ["production"],
  kinds: ["Deployment"],
  label_selector: {
    match_labels: { app: "payments" },
    match_expressions: [
      { key: "tier", operator: "In", values: ["web", "api"] },
      { key: "canary", operator: "DoesNotExist" },
    ],
  },
};
const matching = { kind: "Deployment", labels: { app: "payments", tier: "web" }, environment: "production" };

beforeAll(async () => {
  [service, receiver] = await Promise.all([startTestService(), startReceiver()]);
  projectId = await createProject(service, "checks", "Checks");
  webhookId = (
    await createWebhook(service, projectId, {
      url: `${receiver.url}/filtered`,
      events: ["deployment.succeeded"],
      filters,
    })
  ).id;
});
afterAll(async () => Promise.all([service?.close(), receiver?.close()]));

const check = (body: unknown, id = webhookId) =>
  service.api("POST", `/projects/${projectId}/webhooks/${id}/filter-check`, { body });

/** How many deliveries a real event of this workload gets when recorded, as a rollout records it. */
async function deliveriesOfRealEvent(
  eventType: DeploymentEventType,
  workload: { kind?: string; labels?: Record<string, string>; environment?: string },
): Promise<number> {
  const event = {
    eventType,
    projectId,
    payload: workload.environment === undefined ? {} : { environment: workload.environment },
    ...(workload.kind !== undefined || workload.labels !== undefined
      ? { workload: { kind: workload.kind ?? "", labels: workload.labels ?? {} } }
      : {}),
  };
  return (await withTransaction(service.pool, (client) => emitEvent(client, event))).queued;
}

describe("POST …/webhooks/{webhook_id}/filter-check", () => {
  it.each([
    ["a workload every filter takes", matching, []],
    [
      "another environment",
      { ...matching, environment: "staging" },
      ['environment "staging" is not one of: production'],
    ],
    [
      "no environment",
      { kind: matching.kind, labels: matching.labels },
      ["the event names no environment, and the webhook takes only: production"],
    ],
    ["another kind", { ...matching, kind: "StatefulSet" }, ['kind "StatefulSet" is not one of: Deployment']],
    [
      "labels that break each term",
      { ...matching, labels: { app: "shop", tier: "db", canary: "true" } },
      [
        'label app must be "payments": it is "shop"',
        'label tier must be one of (web, api): it is "db"',
        'label canary must not exist: it is "true"',
      ],
    ],
    [
      "a label missing",
      { ...matching, labels: { tier: "api" } },
      ['label app must be "payments": the workload has no such label'],
    ],
    [
      "no labels and no kind",
      { environment: "production" },
      [
        "the event names no workload kind, and the webhook takes only: Deployment",
        "the event names no workload labels, and the webhook has a label selector",
      ],
    ],
  ])("%s: says why not, and a real event of it agrees", async (_name, workload, reasons) => {
    const answer = await check({ workload });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({
      event_type: "deployment.succeeded",
      would_deliver: reasons.length === 0,
      reasons,
    });
    expect(await deliveriesOfRealEvent("deployment.succeeded", workload)).toBe(reasons.length === 0 ? 1 : 0);
  });

  it("names an event the webhook is not subscribed to, and a disabled webhook", async () => {
    const answer = await check({ event_type: "deployment.failed", workload: matching });
    expect(answer.body).toEqual({
      event_type: "deployment.failed",
      would_deliver: false,
      reasons: ["it is not subscribed to deployment.failed (its events: deployment.succeeded)"],
    });
    expect(await deliveriesOfRealEvent("deployment.failed", matching)).toBe(0);

    const disabled = await createWebhook(service, projectId, {
      url: `${receiver.url}/off`,
      events: ["deployment.created"],
      enabled: false,
    });
    expect((await check({ event_type: "deployment.created" }, disabled.id)).body.reasons).toEqual([
      "the webhook is disabled: enable it to get events",
    ]);
  });

  it("passes every event of a webhook without filters, workload or none", async () => {
    const open = await createWebhook(service, projectId, {
      url: `${receiver.url}/open`,
      events: ["deployment.ready"],
    });
    for (const body of [
      {},
      { event_type: "deployment.ready" },
      { event_type: "deployment.ready", workload: matching },
    ]) {
      const answer = await check(body, open.id);
      expect(answer.body.reasons).toEqual(body.event_type ? [] : [expect.stringContaining("not subscribed")]);
    }
  });

  it.each([
    [{ workload: { kind: 3 } }, "workload.kind must be a string"],
    [{ workload: { labels: ["app"] } }, "workload.labels must be an object"],
    [{ workload: { env: "production" } }, 'Unrecognized key: "env"'],
    [{ event_type: "project.created" }, "event_type must be one of"],
  ])("answers 400 to %j and records nothing", async (body, message) => {
    const before = (await service.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n;
    const answer = await check(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain(message);
    expect((await service.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(before);
  });

  it("answers 404 for a webhook of another project", async () => {
    const other = await createProject(service, "other", "Other");
    const answer = await service.api("POST", `/projects/${other}/webhooks/${webhookId}/filter-check`, {
      body: {},
    });
    expect(answer.status).toBe(404);
  });
});

describe("docs/api.md, Checking filters", () => {
  it("shows the answer the service gives to its example", async () => {
    const { text } = docSection("### Checking filters");
    const blocks = [...text.matchAll(/```json\n([\s\S]*?)```\n/g)].map((match) =>
      JSON.parse(match[1] as string),
    );
    const [request, answer] = blocks;
    const exampleFilters = {
      environments: ["production"],
      label_selector: { match_labels: { app: "payments" } },
    };
    expect(text.replace(/\s+/g, " ")).toContain(
      'A webhook with `"filters": {"environments": ["production"], "label_selector": {"match_labels": {"app": "payments"}}}` answers:',
    );
    const documented = await createWebhook(service, projectId, {
      url: `${receiver.url}/documented`,
      events: ["deployment.succeeded"],
      filters: exampleFilters,
    });
    expect((await check(request, documented.id)).body).toEqual(answer);
  });
});
