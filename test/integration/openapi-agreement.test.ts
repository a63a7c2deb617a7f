import { request } from "node:http";
import { connect } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";

// Two places where /api/docs and the service disagreed (a fuzzer's stateful phase found the second):
// an optional body left out with a JSON Content-Type, and names that the document's schema accepted and
// the service refused. The schema is taken from the served document and checked with a JSON Schema
// validator, so the document, not this test, says what should be accepted.

let service: TestService;
let webhookPath: string;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
let document: any;
beforeAll(async () => {
  service = await startTestService();
  document = await (await fetch(`${service.baseUrl}/api/docs`)).json();
  const project = await createProject(service, "docs", "Docs");
  const webhook = await createWebhook(service, project, {
    url: "http://127.0.0.1:9/unreachable",
    events: ["deployment.succeeded"],
  });
  webhookPath = `/api/projects/${project}/webhooks/${webhook.id}`;
});
afterAll(() => service.close());

/** A request written byte for byte, as curl -X POST -H 'Content-Type: application/json' sends it. */
async function rawRequest(head: string): Promise<number> {
  const { hostname, port } = new URL(service.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.write(
    `${head}Host: ${hostname}\r\nAuthorization: Bearer ${service.adminKey}\r\nConnection: close\r\n\r\n`,
  );
  const answer = await new Promise<string>((resolve, reject) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("close", () => resolve(text)).on("error", reject);
  });
  return Number(answer.split(" ")[1]);
}

describe("POST …/test, whose body the document marks optional", () => {
  it("is documented as optional", async () => {
    const operation = document.paths["/api/projects/{project_id}/webhooks/{webhook_id}/test"].post;
    expect(operation.requestBody.required).toBe(false);
  });

  it("accepts no body with Content-Type: application/json, with no length, a length of 0 or chunked", async () => {
    const statuses = [
      await rawRequest(`POST ${webhookPath}/test HTTP/1.1\r\nContent-Type: application/json\r\n`),
      await rawRequest(
        `POST ${webhookPath}/test HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 0\r\n`,
      ),
      await new Promise<number>((resolve, reject) => {
        const chunked = request(`${service.baseUrl}${webhookPath}/test`, {
          method: "POST",
          headers: { authorization: `Bearer ${service.adminKey}`, "content-type": "application/json" },
        });
        chunked.on("response", (response) => resolve(response.resume().statusCode ?? 0)).on("error", reject);
        chunked.end();
      }),
    ];
    expect(statuses).toEqual([200, 200, 200]);
  });

  it("still refuses a body that is not JSON", async () => {
    const response = await service.api("POST", `${webhookPath.slice(4)}/test`, {
      rawBody: "event_type=deployment.failed",
      contentType: "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(400);
  });
});

describe("names (projects, API keys): the service accepts exactly what the document's schema does", async () => {
  const names = [
    ["plain", "Shop"],
    ["surrounded by spaces", "  Shop \t"],
    ["a carriage return", "\r"],
    ["a space", " "],
    ["tab and newline", "\t\n"],
    ["a no-break space", "\u00a0"],
    ["a byte order mark", "\ufeff"],
    ["a zero-width space (not whitespace)", "\u200b"],
    ["an information separator (whitespace to Python, not to JavaScript)", "\u001c"],
    ["100 letters", "a".repeat(100)],
    ["101 letters", "a".repeat(101)],
    ["100 letters between spaces", ` ${"a".repeat(100)}  `],
    ["100 emoji (200 UTF-16 units)", "😀".repeat(100)],
    ["101 emoji", "😀".repeat(101)],
    ["a NUL", "a\u0000b"],
  ];

  it.each(names)("%s", async (_label, name) => {
    const validate = new Ajv2020({ strict: false }).compile(
      document.components.schemas.CreateProject.properties.name,
    );
    const slug = `p${Math.random().toString(36).slice(2, 10)}`;
    const created = await service.api("POST", "/projects", { body: { name, slug } });
    const key = await service.api("POST", "/api-keys", { body: { name } });
    expect({ project: created.status, key: key.status }).toEqual(
      validate(name) ? { project: 201, key: 201 } : { project: 400, key: 400 },
    );
    if (created.status === 201) expect(created.body.name).toBe(name.trim());
  });
});
