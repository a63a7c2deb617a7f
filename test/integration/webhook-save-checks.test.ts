import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { docSection } from "../support/docs.js";
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

describe("settings that would fail every delivery are refused when saved", () => {
  const standardWebhooks = { ...valid, signature_scheme: "standard-webhooks" };

  it("refuses Standard Webhooks without a secret on create, and takes it with one", async () => {
    for (const body of [standardWebhooks, { ...standardWebhooks, secret: null }]) {
      const message = await refused("POST", webhooksPath(), body, 400);
      expect(message).toMatch(
        /^Invalid request: body\.secret: signature_scheme "standard-webhooks" needs a secret/,
      );
      expect(message).toContain('use signature_scheme "hmac-sha256"');
    }
    await createWebhook(service, projectId, { ...standardWebhooks, secret: "whsec-first-hour" });
  });

  it("refuses an update that would leave a Standard Webhooks webhook unsigned", async () => {
    const unsigned = await createWebhook(service, projectId, valid);
    const path = `${webhooksPath()}/${unsigned.id}`;
    // The scheme on a webhook without a secret: the stored webhook is what is missing (409).
    expect(await refused("PUT", path, { signature_scheme: "standard-webhooks" }, 409)).toMatch(
      /^The webhook would be left without a secret: signature_scheme "standard-webhooks" needs a secret/,
    );
    expect(
      await refused("PUT", path, { signature_scheme: "standard-webhooks", secret: null }, 400),
    ).toContain("body.secret");
    const signed = await service.api("PUT", path, {
      body: { signature_scheme: "standard-webhooks", secret: "s1" },
    });
    expect(signed.status).toBe(200);
    expect(await refused("PUT", path, { secret: null }, 409)).toContain("needs a secret");
    // Leaving the scheme and removing the secret together is fine.
    const back = await service.api("PUT", path, { body: { signature_scheme: "hmac-sha256", secret: null } });
    expect(back.body).toMatchObject({ signature_scheme: "hmac-sha256", has_secret: false });
  });

  it("refuses a template whose output for an example event is not JSON, saying where", async () => {
    const body = { ...valid, format: "template", template: '{"text": {{ event.event_type }}}' };
    const message = await refused("POST", webhooksPath(), body, 400);
    expect(message).toMatch(
      /^Invalid request: body\.template: the example deployment\.succeeded event does not render to a body that can be sent: The template's output is not valid JSON( \(at [^)]+\))?, and the webhook declares application\/json\. Preview the webhook to see its output\.$/,
    );
    // The same text as plain text is sent as rendered; quoted, it is JSON.
    await createWebhook(service, projectId, { ...body, template_content_type: "text/plain" });
    await createWebhook(service, projectId, { ...body, template: '{"text": "{{ event.event_type }}"}' });
  });

  it("renders each subscribed deployment event: one that fails only for deployment.failed is refused", async () => {
    const template = '{% if event.event_type == "deployment.failed" %}oops{% else %}{"ok": true}{% endif %}';
    const body = {
      ...valid,
      format: "template",
      template,
      events: ["deployment.succeeded", "deployment.failed"],
    };
    expect(await refused("POST", webhooksPath(), body, 400)).toContain("the example deployment.failed event");
    const succeededOnly = await createWebhook(service, projectId, {
      ...body,
      events: ["deployment.succeeded"],
    });
    // Subscribing it to deployment.failed later is refused the same way.
    const path = `${webhooksPath()}/${succeededOnly.id}`;
    expect(await refused("PUT", path, { events: ["deployment.failed"] }, 400)).toContain("deployment.failed");
    // So is a content type that makes the stored template's output JSON it is not.
    const text = await createWebhook(service, projectId, {
      ...valid,
      format: "template",
      template: "Deployed {{ event.payload.environment }}",
      template_content_type: "text/plain",
    });
    expect(
      await refused(
        "PUT",
        `${webhooksPath()}/${text.id}`,
        { template_content_type: "application/json" },
        400,
      ),
    ).toContain("not valid JSON");
  });

  it("refuses a binary CloudEvents mode for another format, and drops it when the format changes", async () => {
    const message = await refused(
      "POST",
      webhooksPath(),
      { ...valid, format: "slack", cloudevents_mode: "binary" },
      400,
    );
    expect(message).toBe(
      'Invalid request: body.cloudevents_mode: cloudevents_mode "binary" is only used with format "cloudevents" (format is "slack")',
    );
    // What every other format reads back is taken, so a webhook read can be sent back.
    const slack = await createWebhook(service, projectId, {
      ...valid,
      format: "slack",
      cloudevents_mode: "structured",
    });
    const path = `${webhooksPath()}/${slack.id}`;
    expect(await refused("PUT", path, { cloudevents_mode: "binary" }, 409)).toBe(
      'The webhook\'s format is "slack": cloudevents_mode "binary" is only used with format "cloudevents" (format is "slack").',
    );
    const binary = await service.api("PUT", path, {
      body: { format: "cloudevents", cloudevents_mode: "binary" },
    });
    expect(binary.body.cloudevents_mode).toBe("binary");
    const back = await service.api("PUT", path, { body: { format: "slack" } });
    expect(back.body).toMatchObject({ format: "slack", cloudevents_mode: "structured" });
  });
});

describe("docs/formats.md", () => {
  it("quotes the answer the service gives to its example of a template that is not JSON", async () => {
    const { text } = docSection("### Limits and errors");
    const [, template, message] =
      /The template `([^`]+)` \(a trailing comma\) is answered:\n`([^`]+)`/.exec(text) ?? [];
    expect(template).toBe('{"text": "{{ event.event_type }}",}');
    const body = { ...valid, format: "template", template };
    expect(await refused("POST", webhooksPath(), body, 400)).toBe(message);
  });
});

describe("the API description states the CloudEvents mode rule", () => {
  it("judges a binary mode with another format invalid, as the service does, for create, update and drafts", async () => {
    const document = (await service.api("GET", "/docs")).body;
    const schemas = document.components.schemas;
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(schemas))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const judge = (name: string, body: object) =>
      ajv.validate({ $ref: `#/components/schemas/${name}`, components: { schemas } }, body);
    const binarySlack = { ...valid, format: "slack", cloudevents_mode: "binary" };
    for (const name of ["CreateWebhook", "DraftPreviewRequest"]) {
      expect(judge(name, binarySlack)).toBe(false);
      expect(judge(name, { ...valid, cloudevents_mode: "binary" })).toBe(false);
      expect(judge(name, { ...valid, format: "template", template: "x", cloudevents_mode: "binary" })).toBe(
        false,
      );
      expect(judge(name, { ...valid, format: "slack", cloudevents_mode: "structured" })).toBe(true);
      expect(judge(name, { ...valid, format: "cloudevents", cloudevents_mode: "binary" })).toBe(true);
    }
    expect(judge("UpdateWebhook", { format: "slack", cloudevents_mode: "binary" })).toBe(false);
    // Without a format, the stored one decides (a 409), which the document cannot know.
    expect(judge("UpdateWebhook", { cloudevents_mode: "binary" })).toBe(true);
    // And the service answers each as the document judges it.
    expect((await service.api("POST", webhooksPath(), { body: binarySlack })).status).toBe(400);
    const draft = await service.api("POST", `${webhooksPath()}/preview`, { body: binarySlack });
    expect(draft.status).toBe(400);
  });
});
