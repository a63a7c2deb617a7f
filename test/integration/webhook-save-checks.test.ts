import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";

// What a new user meets first: a mistake answered with what to do, and settings each valid alone that
// together would fail every delivery refused when saved (400, or 409 against the stored webhook),
// changing nothing.

let service: TestService;
let projectId: number;
const valid = { url: "https://example.com/hook", events: ["deployment.succeeded"] };
const webhooksPath = () => `/projects/${projectId}/webhooks`;

async function webhookRows(): Promise<unknown[]> {
  return (await service.pool.query("SELECT * FROM webhooks ORDER BY id")).rows;
}

/** A create or update that must be refused with `status`, leaving every row as it was; its message. */
async function refused(method: string, path: string, body: unknown, status: number): Promise<string> {
  const before = await webhookRows();
  const response = await service.api(method, path, { body });
  expect(response.status, response.text).toBe(status);
  expect(await webhookRows()).toEqual(before);
  return response.body.error.message;
}

beforeAll(async () => {
  service = await startTestService();
  projectId = await createProject(service, "first-hour", "First hour");
});
afterAll(() => service?.close());

describe("errors that say what to do", () => {
  it.each([
    ["signatureScheme", { signatureScheme: "standard-webhooks" }, '"signature_scheme" for "signatureScheme"'],
    ["cloudEventsMode", { cloudeventsMode: "binary" }, '"cloudevents_mode" for "cloudeventsMode"'],
  ])("names the API's spelling of the resource's %s", async (_name, fields, hint) => {
    const message = await refused("POST", webhooksPath(), { ...valid, ...fields }, 400);
    expect(message).toContain("Unrecognized key");
    expect(message).toContain(`the API spells its fields in snake_case: ${hint}`);
  });

  it("names label_selector inside filters", async () => {
    const body = { ...valid, filters: { labelSelector: { match_labels: { app: "shop" } } } };
    expect(await refused("POST", webhooksPath(), body, 400)).toContain(
      '"label_selector" for "labelSelector"',
    );
  });

  it("adds no hint to a name that is not camelCase", async () => {
    expect(await refused("POST", webhooksPath(), { ...valid, name: "x" }, 400)).toBe(
      'Invalid request: body: Unrecognized key: "name"',
    );
  });

  it.each([
    [{ rate_limit: { per_second: 1 } }, "body.rate_limit.burst: rate_limit.burst is required"],
    [{ rate_limit: { burst: 2 } }, "body.rate_limit.per_second: rate_limit.per_second is required"],
    [{ rate_limit: { per_second: 1, burst: "2" } }, "rate_limit.burst must be a number"],
    [{ retry_policy: {} }, "retry_policy.max_attempts is required"],
    [{ auto_disable: { min_duration_seconds: 5 } }, "auto_disable.after_failures is required"],
  ])("tells a missing number from one of the wrong type: %j", async (fields, message) => {
    expect(await refused("POST", webhooksPath(), { ...valid, ...fields }, 400)).toContain(message);
  });
});
