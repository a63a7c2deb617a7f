import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stoppedMessage } from "../../src/formats/template.js";
import { createProject, createWebhook, deliveriesOf, emit } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// A template that would hold the process (one filter chain over a long range: liquidjs checks its time
// only between pieces) fails its own delivery, its own preview, and nothing else; and previews cost
// what a project is allowed.

/** The bomb, made unique by `n` so that each is run (a stopped one is remembered by its text). */
const bomb = (n: number) =>
  `{{ (1..20000) | where_exp: "x", "${Array.from({ length: 200 }, () => "x == 0").join(" or ")} or x == -${n}" | size }}`;
const stopped = `The template failed to render: ${stoppedMessage}`;

let receiver: Receiver;
let service: TestService;
let paced: TestService;

beforeAll(async () => {
  receiver = await startReceiver();
  [service, paced] = await Promise.all([
    startTestService({ PREVIEWS_PER_PROJECT_PER_MINUTE: "0" }),
    startTestService({ PREVIEWS_PER_PROJECT_PER_MINUTE: "3" }),
  ]);
});
afterAll(async () => {
  await receiver.close();
  await Promise.all([service?.close(), paced?.close()]);
});

/**
 * A webhook whose template is the bomb. The API refuses it when saved now (its example event runs away
 * too: the next test), so it is written as a webhook saved before that check, or declared by a Webhook
 * resource (whose template is only parsed), would be: a template that passed its save and runs away on
 * the events it meets.
 */
async function bombWebhook(projectId: number, n: number, path: string) {
  const created = await createWebhook(service, projectId, {
    url: `${receiver.url}${path}`,
    events: ["deployment.created"],
    format: "template",
    template: "ok",
    template_content_type: "text/plain",
  });
  await service.pool.query("UPDATE webhooks SET template = $1 WHERE id = $2", [bomb(n), created.id]);
  return created;
}

describe("a template that runs away", () => {
  it("is refused when saved through the API, naming the limit it ran into", async () => {
    const project = await createProject(service, "bomb-saved");
    const refused = await service.api("POST", `/projects/${project}/webhooks`, {
      body: {
        url: `${receiver.url}/bomb-saved`,
        events: ["deployment.created"],
        format: "template",
        template: bomb(0),
        template_content_type: "text/plain",
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(`${stopped}. Preview the webhook to see its output.`);
  });

  it("fails only its own delivery, with the documented message, while the process answers", async () => {
    const project = await createProject(service, "bomb-delivery");
    const runaway = await bombWebhook(project, 1, "/bomb");
    const healthy = await createWebhook(service, project, {
      url: `${receiver.url}/beside-bomb`,
      events: ["deployment.created"],
    });
    const { envelope } = await emit(service.pool, project, "deployment.created");
    const failed = await waitUntil("the bomb's delivery recorded", async () => {
      const [record] = await deliveriesOf(service, project, runaway.id);
      return record;
    });
    expect(failed).toMatchObject({
      event_id: envelope.id,
      success: false,
      status_code: 0,
      error_message: `Not sent: the template body could not be rendered: ${stopped}`,
    });
    const [sent] = await deliveriesOf(service, project, healthy.id);
    expect(sent).toMatchObject({ event_id: envelope.id, success: true, status_code: 200 });
    expect(receiver.requests.filter((r) => r.path === "/bomb")).toEqual([]);
  });

  it("holds no request of anyone while a test event of it renders", async () => {
    const project = await createProject(service, "bomb-test-event");
    const runaway = await bombWebhook(project, 2, "/bomb-test");
    const order: string[] = [];
    const test = service.api("POST", `/projects/${project}/webhooks/${runaway.id}/test`).then((answer) => {
      order.push("test event");
      return answer;
    });
    // Asked once the test event's delivery row is written (its render comes next): answered before it.
    await waitUntil("the test event's delivery row", async () => {
      const { rows } = await service.pool.query("SELECT 1 FROM deliveries WHERE webhook_id = $1", [
        runaway.id,
      ]);
      return rows.length > 0 ? true : undefined;
    });
    const health = await fetch(`${service.baseUrl}/healthz`);
    order.push(`healthz ${health.status}`);
    const answer = await test;
    expect(order).toEqual(["healthz 200", "test event"]);
    expect(answer.body).toMatchObject({
      success: false,
      status_code: 0,
      error_message: `Not sent: the template body could not be rendered: ${stopped}`,
    });
  });
});

describe("previews", () => {
  it("answers a runaway template's preview with the error", async () => {
    const project = await createProject(service, "bomb-preview");
    const preview = await service.api("POST", `/projects/${project}/webhooks/preview`, {
      body: { format: "template", template: bomb(3), template_content_type: "text/plain" },
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ body: null, error: stopped });
  });

  it("paces a project's previews per minute: 429 with Retry-After, and another project still previews", async () => {
    const project = await createProject(paced, "paced-previews");
    const draft = {
      format: "template",
      template: "{{ event.event_type }}",
      template_content_type: "text/plain",
    };
    for (let i = 0; i < 3; i++) {
      const answer = await paced.api("POST", `/projects/${project}/webhooks/preview`, { body: draft });
      expect(answer.status).toBe(200);
      expect(answer.body.body).toBe("deployment.succeeded");
    }
    const refused = await paced.api("POST", `/projects/${project}/webhooks/preview`, { body: draft });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.message).toContain("has made its 3 previews per minute on this replica");
    const other = await createProject(paced, "other-previews");
    const answer = await paced.api("POST", `/projects/${other}/webhooks/preview`, { body: draft });
    expect(answer.status).toBe(200);
    const metrics = await fetch(`${paced.baseUrl}/metrics`).then((res) => res.text());
    expect(metrics).toMatch(/webhook_operator_previews_refused_total\{limit="per-minute"\} 1/);
  });
});
