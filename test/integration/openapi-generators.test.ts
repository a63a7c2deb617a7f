import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";

// What code generators read in /api/docs and what the service answers them (the client suite,
// scripts/clients/, runs six generated clients against it; these are its rules, checked directly).

let service: TestService;
let project: number;
let webhookPath: string;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
let document: any;
beforeAll(async () => {
  service = await startTestService();
  document = await (await fetch(`${service.baseUrl}/api/docs`)).json();
  project = await createProject(service, "generated", "Generated");
  const webhook = await createWebhook(service, project, {
    url: "http://127.0.0.1:9/unreachable",
    events: ["deployment.succeeded"],
  });
  webhookPath = `/projects/${project}/webhooks/${webhook.id}`;
});
afterAll(() => service.close());

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
type Operation = any;
const operations = (): [string, Operation][] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as object).map(([method, operation]): [string, Operation] => [
      `${method} ${path}`,
      operation,
    ]),
  );

describe("the document", () => {
  it("names its server as the service's root and spells /api in every path", () => {
    expect(document.servers.map((server: { url: string }) => server.url)).toEqual(["/"]);
    expect(Object.keys(document.paths).every((path) => path.startsWith("/api/"))).toBe(true);
  });

  it("declares 500, 503 and a default on every operation, and 413 on every one with a body", () => {
    for (const [name, operation] of operations()) {
      const statuses = Object.keys(operation.responses);
      expect({ name, statuses }).toEqual({
        name,
        statuses: expect.arrayContaining(["500", "503", "default"]),
      });
      if (operation.requestBody)
        expect({ name, statuses }).toEqual({ name, statuses: expect.arrayContaining(["413"]) });
      expect(operation.responses.default.content["application/json"].schema.$ref).toBe(
        "#/components/schemas/ErrorResponse",
      );
    }
    expect(document.components.schemas).not.toHaveProperty("Error");
  });

  it("says int64 on ids and uses no allOf (whose null types generators drop)", () => {
    const schemas = document.components.schemas;
    for (const name of ["Webhook", "Delivery", "Project", "TestEventResult", "CreatedApiKey"]) {
      expect({
        name,
        id: schemas[name].properties.id?.format ?? schemas[name].properties.delivery_id.format,
      }).toEqual({
        name,
        id: "int64",
      });
    }
    // A clamped parameter takes any integer: no format bounds it.
    const list = document.paths["/api/projects/{project_id}/webhooks/{webhook_id}/deliveries"].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit.schema.format).toBeUndefined();
    expect(JSON.stringify(document)).not.toContain('"allOf"');
    expect(schemas.TestEventResult.properties.error_message.type).toEqual(["string", "null"]);
  });

  it("gives no default to a request body's fields", () => {
    for (const [name, operation] of operations()) {
      const ref = operation.requestBody?.content["application/json"].schema.$ref;
      if (!ref) continue;
      const schema = document.components.schemas[ref.replace("#/components/schemas/", "")];
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        expect({ name, field, property }).not.toEqual({
          name,
          field,
          property: expect.objectContaining({ default: expect.anything() }),
        });
      }
    }
  });

  it("describes the Link header so that its target, joined to the server URL, is the next page", async () => {
    for (let i = 0; i < 2; i++) expect((await service.api("POST", `${webhookPath}/test`)).status).toBe(200);
    const first = await service.api("GET", `${webhookPath}/deliveries?limit=1`);
    const link = first.headers.get("link") ?? "";
    const schema =
      document.paths["/api/projects/{project_id}/webhooks/{webhook_id}/deliveries"].get.responses["200"]
        .headers.Link.schema;
    expect(link).toMatch(new RegExp(schema.pattern));
    const target = /^<([^>]*)>/.exec(link)?.[1] ?? "";
    const next = await fetch(`${service.baseUrl}${target}`, {
      headers: { authorization: `Bearer ${service.adminKey}` },
    });
    expect(next.status).toBe(200);
    const [older] = (await next.json()) as { id: number }[];
    expect(older?.id).toBeLessThan(first.body[0].id);
  });
});

describe("unknown query parameters", () => {
  it("are a 400 naming them on every kind of list and on other operations", async () => {
    for (const path of [
      "/projects?per_page=5&pgae=2",
      `${webhookPath.replace(/\/\d+$/, "")}?page_size=5&pgae=2`,
      `${webhookPath}/deliveries?limit=5&pgae=2`,
      `${webhookPath}?pgae=2`,
    ]) {
      const answer = await service.api("GET", path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({
        path,
        status: 400,
        body: {
          error: {
            code: "validation_failed",
            message: expect.stringContaining("query.pgae: unknown query parameter"),
            details: [{ path: "query.pgae", message: expect.stringContaining("unknown query parameter") }],
          },
        },
      });
    }
  });

  it("refuse a cursor list's page number instead of answering its first page", async () => {
    const answer = await service.api("GET", `${webhookPath}/deliveries?page=2&per_page=1`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.map((detail: { path: string }) => detail.path)).toEqual([
      "query.page",
      "query.per_page",
    ]);
    expect(answer.body.error.message).toContain("this operation takes limit, cursor, success, event_type");
  });

  it("refuse a write before it changes anything", async () => {
    const before = (await service.api("GET", "/projects?per_page=100")).body.total;
    const answer = await service.api("POST", "/projects?dry_run=true", { body: { name: "No", slug: "no" } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual([{ path: "query.dry_run", message: expect.any(String) }]);
    expect((await service.api("GET", "/projects?per_page=100")).body.total).toBe(before);
  });
});

describe("an update's events: null", () => {
  it("keeps the subscribed events, as leaving them out does", async () => {
    const before = (await service.api("GET", webhookPath)).body;
    const answer = await service.api("PUT", webhookPath, { body: { events: null, enabled: true } });
    expect(answer.status).toBe(200);
    expect(answer.body.events).toEqual(before.events);
    expect((await service.api("PUT", webhookPath, { body: { events: [] } })).status).toBe(400);
  });
});

describe("a JSON null body", () => {
  it("is a body left out where the body is optional (a test event of the default type)", async () => {
    const answer = await service.api("POST", `${webhookPath}/test`, {
      rawBody: "null",
      contentType: "application/json",
    });
    expect(answer.status).toBe(200);
    const delivery = await service.api("GET", `${webhookPath}/deliveries/${answer.body.delivery_id}`);
    expect(delivery.body.event_type).toBe("deployment.succeeded");
  });

  it("is still malformed where a body is required, as a bare string or number is anywhere", async () => {
    for (const [path, rawBody] of [
      ["/projects", "null"],
      ["/projects", '"x"'],
      [`${webhookPath}/test`, "1"],
    ] as const) {
      const answer = await service.api("POST", path, { rawBody, contentType: "application/json" });
      expect({ path, rawBody, status: answer.status, body: answer.body }).toEqual({
        path,
        rawBody,
        status: 400,
        body: { error: { code: expect.any(String), message: "Malformed JSON in request body." } },
      });
    }
  });
});
