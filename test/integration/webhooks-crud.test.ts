import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";
import { webhookFields } from "../support/spec-fields.js";

let service: TestService;
let projectId: number;

beforeAll(async () => {
  service = await startTestService();
  projectId = await createProject(service, "shop", "Shop");
});
afterAll(() => service.close());

describe("webhook lifecycle through the API", () => {
  it("creates, lists, reads, updates, disables and deletes a webhook", async () => {
    const created = await service.api("POST", `/projects/${projectId}/webhooks`, {
      body: { url: "https://example.com/hook", events: ["deployment.succeeded"], secret: "s3cret-value" },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...webhookFields].sort());
    expect(created.body).toMatchObject({
      project_id: projectId,
      url: "https://example.com/hook",
      events: ["deployment.succeeded"],
      enabled: true,
      has_secret: true,
    });
    expect(created.text).not.toContain("s3cret-value");
    const id = created.body.id;

    const list = await service.api("GET", `/projects/${projectId}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.body.map((w: { id: number }) => w.id)).toEqual([id]);

    const read = await service.api("GET", `/projects/${projectId}/webhooks/${id}`);
    expect(read.body).toEqual(created.body);

    const disabled = await service.api("PUT", `/projects/${projectId}/webhooks/${id}`, {
      body: { enabled: false },
    });
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    expect(disabled.body.events).toEqual(["deployment.succeeded"]);
    expect(Date.parse(disabled.body.updated_at)).toBeGreaterThan(Date.parse(created.body.updated_at));

    const removed = await service.api("DELETE", `/projects/${projectId}/webhooks/${id}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    expect((await service.api("GET", `/projects/${projectId}/webhooks/${id}`)).status).toBe(404);
  });
});
