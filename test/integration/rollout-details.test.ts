import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import type { RolloutDetails } from "../../src/formats/rollout-details.js";
import { createProject, createWebhook, deliveriesOf } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// The rollout_details opt-in through the real service and a real receiver: webhooks that did not opt
// in receive exactly the bytes they did before (the envelope as stored, CloudEvents and Standard
// Webhooks bodies without the key), those that did get payload.rollout, a replay sends the same bytes,
// and an event without details (a test event) has no key even with the opt-in.

const details: RolloutDetails = {
  workload: { kind: "Deployment", name: "shop", namespace: "shop", revision: "4" },
  changes: {
    images: [{ container: "web", init: false, before: "shop:1.0", after: "shop:1.1" }],
    previous_revision: "3",
    change_cause: "Release 1.1",
    commit_sha: "abc1234",
    branch: "main",
    metadata: { "app.kubernetes.io/version": "1.1" },
  },
  links: [{ name: "Grafana", url: "https://grafana.example/d/x?var-workload=shop" }],
};
const payload = { deployment_id: 7, project_id: 0, project_name: "Shop", status: "succeeded" };

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  [service, receiver] = await Promise.all([startTestService(), startReceiver()]);
  projectId = await createProject(service, "shop", "Shop");
}, 120_000);
afterAll(async () => {
  await Promise.all([service?.close(), receiver?.close()]);
});

/** A webhook of the project on its own receiver path, subscribed to deployment.succeeded. */
const webhookOn = (route: string, fields: Record<string, unknown> = {}) =>
  createWebhook(service, projectId, {
    url: `${receiver.url}/${route}`,
    events: ["deployment.succeeded"],
    secret: "rollout-details-secret",
    ...fields,
  });

/** The request the receiver got on `route` for the event `eventId`. */
const requestOf = (route: string, eventId: string) =>
  waitUntil(`a request on /${route} for event ${eventId}`, async () =>
    receiver.requests.find(
      (r) =>
        r.path === `/${route}` &&
        (r.headers["webhook-id"] === eventId || r.body.includes(eventId) || r.headers["ce-id"] === eventId),
    ),
  );

describe("rollout_details", () => {
  it("is absent from a webhook's answer until set, and shown as true once set", async () => {
    const plain = await webhookOn("fields");
    expect(plain).not.toHaveProperty("rollout_details");
    const set = await service.api("PUT", `/projects/${projectId}/webhooks/${plain.id}`, {
      body: { rollout_details: true },
    });
    expect(set.status).toBe(200);
    expect(set.body.rollout_details).toBe(true);
    const bad = await service.api("PUT", `/projects/${projectId}/webhooks/${plain.id}`, {
      body: { rollout_details: "yes" },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("rollout_details must be a boolean");
    const off = await service.api("PUT", `/projects/${projectId}/webhooks/${plain.id}`, {
      body: { rollout_details: false },
    });
    expect(off.body).not.toHaveProperty("rollout_details");
  });

  it("leaves every default body byte for byte and adds payload.rollout only with the opt-in", async () => {
    await webhookOn("envelope");
    await webhookOn("envelope-opted", { rollout_details: true });
    await webhookOn("cloudevents", { format: "cloudevents" });
    await webhookOn("cloudevents-opted", { format: "cloudevents", rollout_details: true });
    await webhookOn("standard", { signature_scheme: "standard-webhooks" });
    await webhookOn("standard-opted", { signature_scheme: "standard-webhooks", rollout_details: true });
    await webhookOn("slack", { format: "slack" });

    const emitted = await withTransaction(service.pool, (client) =>
      emitEvent(client, {
        eventType: "deployment.succeeded",
        projectId,
        payload: { ...payload, project_id: projectId },
        rolloutDetails: details,
      }),
    );
    const id = emitted.envelope.id;

    // The envelope as stored, exactly: what every webhook without the opt-in got before it existed.
    expect((await requestOf("envelope", id)).body).toBe(emitted.body);
    expect((await requestOf("standard", id)).body).toBe(emitted.body);
    const opted = JSON.parse((await requestOf("envelope-opted", id)).body);
    expect(opted.payload.rollout).toEqual(details);
    const { rollout: _rollout, ...rest } = opted.payload;
    expect(JSON.stringify({ ...opted, payload: rest })).toBe(emitted.body);
    expect(JSON.parse((await requestOf("standard-opted", id)).body).payload.rollout).toEqual(details);

    const cloudEvent = JSON.parse((await requestOf("cloudevents", id)).body);
    expect(cloudEvent.data).not.toHaveProperty("rollout");
    const openedCloudEvent = JSON.parse((await requestOf("cloudevents-opted", id)).body);
    expect(openedCloudEvent.data.rollout).toEqual(details);
    const { rollout: _ceRollout, ...ceRest } = openedCloudEvent.data;
    expect(ceRest).toEqual(cloudEvent.data);

    // A chat card is our own format: it shows what changed whenever the event says, opt-in or not.
    const slack = (
      await waitUntil("the Slack card", async () => receiver.requests.find((r) => r.path === "/slack"))
    ).body;
    expect(slack).toContain("*What changed*\\nRevision 3 → 4\\nweb: shop:1.0 → shop:1.1");
  });

  it("replays the opted-in body as it was sent", async () => {
    const webhook = await webhookOn("replayed", { rollout_details: true });
    const emitted = await withTransaction(service.pool, (client) =>
      emitEvent(client, {
        eventType: "deployment.succeeded",
        projectId,
        payload: { ...payload, project_id: projectId },
        rolloutDetails: details,
      }),
    );
    const first = await requestOf("replayed", emitted.envelope.id);
    const [record] = await waitUntil("the first delivery's record", async () => {
      const records = await deliveriesOf(service, projectId, webhook.id);
      return records.length > 0 ? records : undefined;
    });
    const retry = await service.api(
      "POST",
      `/projects/${projectId}/webhooks/${webhook.id}/deliveries/${record.id}/retry`,
    );
    expect(retry.status).toBe(200);
    const sent = await waitUntil("the replay's request", async () =>
      receiver.requests.filter((r) => r.path === "/replayed").length >= 2
        ? receiver.requests.filter((r) => r.path === "/replayed")[1]
        : undefined,
    );
    expect(sent.body).toBe(first.body);
    expect(JSON.parse(sent.body).payload.rollout).toEqual(details);
  });

  it("adds nothing to an event without details (a test event), even with the opt-in", async () => {
    const webhook = await webhookOn("test-event", { rollout_details: true });
    const tested = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/test`);
    expect(tested.status).toBe(200);
    const sent = await waitUntil("the test event's request", async () =>
      receiver.requests.find((r) => r.path === "/test-event"),
    );
    expect(JSON.parse(sent.body).payload).not.toHaveProperty("rollout");
  });
});
