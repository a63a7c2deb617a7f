import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { createApp } from "../../src/app/http-app.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { destinationPolicyOf } from "../../src/delivery-engine/destination-policy.js";
import { createDeliveryEngine } from "../../src/delivery-engine/engine.js";
import { createLogger } from "../../src/logger.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { freePort as closedPort } from "../support/ports.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";
import { deliveryFields, optionalWebhookFields, webhookFields } from "../support/spec-fields.js";

const logger = createLogger("silent");
const httpMethods = ["get", "post", "put", "delete", "patch", "head", "options"];

interface Operation {
  method: string;
  path: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
function documentedOperations(document: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, object>)) {
    for (const method of Object.keys(item)) {
      if (httpMethods.includes(method)) out.push({ method, path });
    }
  }
  return out;
}

/** The real app with a real (never started) delivery engine: these tests make no delivery. */
function appFor(pool: Pool, databaseUrl: string): Express {
  const config = loadConfig({ LOG_LEVEL: "silent" });
  const engine = createDeliveryEngine({
    pool,
    databaseUrl,
    settings: config.delivery,
    openSecret: () => "",
    outcomePolicy: autoDisablePolicy,
    logger,
  });
  return createApp({
    pool,
    logger,
    engine,
    dashboard: false,
    destinationPolicy: destinationPolicyOf(config.delivery),
    webhooksPerProjectLimit: config.webhooksPerProjectLimit,
    secrets: testSecretBox(),
  });
}

const key = (operation: Operation) => `${operation.method.toUpperCase()} ${operation.path}`;

async function listen(app: Express): Promise<{ url: string; server: Server }> {
  const server = createServer(app);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

let service: TestService;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
let document: any;

beforeAll(async () => {
  service = await startTestService();
  const response = await fetch(`${service.baseUrl}/api/docs`);
  expect(response.status).toBe(200);
  document = await response.json();
});
afterAll(() => service.close());

describe("GET /api/docs", () => {
  it("documents endpoint 7's cursor, filters and Link header, and the stats endpoint", () => {
    const list = document.paths["/api/projects/{project_id}/webhooks/{webhook_id}/deliveries"].get;
    expect(
      list.parameters
        .filter((p: { in: string }) => p.in === "query")
        .map((p: { name: string }) => p.name)
        .sort(),
    ).toEqual(["cursor", "event_type", "limit", "success"]);
    expect(list.responses["200"].headers.Link.description).toContain('rel="next"');
    expect(list.responses["200"].content["application/json"].schema.type).toBe("array");
    const stats = document.paths["/api/projects/{project_id}/webhooks/{webhook_id}/stats"].get;
    expect(stats.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/DeliveryStats",
    );
    expect(Object.keys(document.components.schemas.DeliveryStats.properties).sort()).toEqual([
      "bucket",
      "buckets",
      "failed",
      "last_delivery",
      "range",
      "succeeded",
    ]);
  });

  it("serves an OpenAPI 3.1 document without a key", () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).toEqual(expect.any(String));
    expect(document.info.version).toEqual(expect.any(String));
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
  });

  it("documents every method each documented path serves, and nothing else, as the paths themselves answer", async () => {
    // OPTIONS on a path answers 204 with the methods it serves (Allow), the same list a 405 gives.
    const methodsByPath = new Map<string, string[]>();
    for (const { method, path } of documentedOperations(document))
      methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method.toUpperCase()]);
    expect(methodsByPath.size).toBeGreaterThanOrEqual(8);
    for (const [path, methods] of methodsByPath) {
      const response = await fetch(`${service.baseUrl}${path.replace(/\{\w+\}/g, "1")}`, {
        method: "OPTIONS",
        headers: { authorization: `Bearer ${service.adminKey}` },
      });
      const allow = response.headers.get("allow")?.split(", ").sort();
      expect({ path, status: response.status, allow }).toEqual({ path, status: 204, allow: methods.sort() });
    }
  });

  it("documents the spec's endpoints 1 to 8", () => {
    const documented = documentedOperations(document).map(key);
    expect(documented).toEqual(
      expect.arrayContaining([
        "GET /api/webhook-event-types",
        "POST /api/projects/{project_id}/webhooks",
        "GET /api/projects/{project_id}/webhooks",
        "GET /api/projects/{project_id}/webhooks/{webhook_id}",
        "PUT /api/projects/{project_id}/webhooks/{webhook_id}",
        "DELETE /api/projects/{project_id}/webhooks/{webhook_id}",
        "GET /api/projects/{project_id}/webhooks/{webhook_id}/deliveries",
        "GET /api/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}",
      ]),
    );
  });

  it("declares path parameters as integers", () => {
    const operation = document.paths["/api/projects/{project_id}/webhooks/{webhook_id}"].get;
    const names = operation.parameters.filter((p: { in: string }) => p.in === "path");
    expect(names.map((p: { name: string }) => p.name).sort()).toEqual(["project_id", "webhook_id"]);
    for (const parameter of names) {
      expect(parameter.required).toBe(true);
      expect(parameter.schema.type).toBe("integer");
    }
  });

  it("has Webhook and Delivery schemas with exactly the spec §2.5 and §2.6 properties", () => {
    const schemas = document.components.schemas;
    expect(Object.keys(schemas.Webhook.properties).sort()).toEqual(
      [...webhookFields, ...optionalWebhookFields].sort(),
    );
    expect(schemas.Webhook.properties).not.toHaveProperty("secret");
    expect(Object.keys(schemas.Delivery.properties).sort()).toEqual([...deliveryFields].sort());
  });

  it("declares the bearerAuth security scheme and requires it", () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
  });
});

describe("health endpoints", () => {
  it("answers /healthz with 200 {status: ok}", async () => {
    const response = await fetch(`${service.baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it("answers /readyz with 200 when the database answers", async () => {
    const response = await fetch(`${service.baseUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ready" });
  });

  it("answers /readyz with 503 when the database is unreachable, while /healthz stays 200", async () => {
    let pool: Pool | undefined;
    let server: Server | undefined;
    try {
      const unreachable = `postgres://postgres:postgres@127.0.0.1:${await closedPort()}/postgres`;
      pool = createPool(unreachable, 1);
      const listening = await listen(appFor(pool, unreachable));
      server = listening.server;
      const ready = await fetch(`${listening.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: "not ready" });
      const health = await fetch(`${listening.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      if (server) await close(server);
      await pool?.end();
    }
  });
});
