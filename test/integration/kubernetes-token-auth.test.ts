import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { type RunningService, startService } from "../../src/app/service.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// Without a cluster, Kubernetes token authentication is off and says so: in the start-up log and in
// the 401 a token gets. The same token shape never reaches the API-key table, nor a key the API
// server. With a cluster: test/cluster/kubernetes-tokens.test.ts.

const adminKey = "test-admin-key-0123456789";
// A JWT as `kubectl create token` prints it (header, claims, signature), signed by nobody.
const jwt = [
  Buffer.from(JSON.stringify({ alg: "RS256", kid: "k" })).toString("base64url"),
  Buffer.from(JSON.stringify({ aud: ["webhook-operator"], exp: 4_102_444_800, sub: "x" })).toString(
    "base64url",
  ),
  "c2lnbmF0dXJl",
].join(".");

let database: TestDatabase;
let service: RunningService;
const logLines: { msg: string; reason?: string }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: database.url,
    API_KEY: adminKey,
    HOST: "127.0.0.1",
    PORT: "0",
    METRICS_CACHE_MS: "0",
  });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  service = await startService(config, pino({ level: "info" }, sink), { kubeConfig: undefined });
});
afterAll(async () => {
  await service?.close();
  await database?.drop();
});

async function call(credential: string, path = "/projects") {
  const response = await fetch(`${service.url}/api${path}`, {
    headers: { authorization: `Bearer ${credential}` },
  });
  return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
}

async function authenticationsCounted(method: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) =>
      l.startsWith(`webhook_operator_api_authentications_total{method="${method}",outcome="${outcome}"}`),
    );
  return Number(line?.split(" ").at(-1) ?? 0);
}

describe("Kubernetes tokens without a cluster", () => {
  it("logs at start-up that token authentication is off", () => {
    expect(logLines).toContainEqual(
      expect.objectContaining({
        msg: "Kubernetes token authentication off: /api accepts API keys only",
        reason: "no Kubernetes cluster",
      }),
    );
  });

  it("answers a token 401 saying token authentication is off, and counts it", async () => {
    const before = await authenticationsCounted("kubernetes_token", "rejected");
    const response = await call(jwt);
    expect(response.status).toBe(401);
    expect(response.body.error?.message).toContain("Kubernetes token authentication is off");
    expect(await authenticationsCounted("kubernetes_token", "rejected")).toBe(before + 1);
  });

  it("reaches the CLI's user as the same message, through --api-key", async () => {
    assertBuilt();
    const result = await runCli({ baseUrl: service.url, apiKey: jwt }, ["webhooks", "events"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Kubernetes token authentication is off");
    expect(result.stderr).toContain("(HTTP 401, unauthorized)");
  });

  it("treats anything not shaped like a JWT as an API key", async () => {
    const before = await authenticationsCounted("api_key", "success");
    expect((await call(adminKey)).status).toBe(200);
    expect(await authenticationsCounted("api_key", "success")).toBe(before + 1);
    for (const credential of ["wo_abc.def.ghi", "a.b.c", `${jwt}.extra`]) {
      const response = await call(credential);
      expect(response.status).toBe(401);
      expect(response.body.error?.message).toBe("Invalid API key.");
    }
  });

  it("refuses to start with a configured API key shaped like a JWT", async () => {
    const config = loadConfig({ DATABASE_URL: database.url, API_KEY: jwt, HOST: "127.0.0.1", PORT: "0" });
    await expect(startService(config, pino({ level: "silent" }), { kubeConfig: undefined })).rejects.toThrow(
      "has the shape of a JWT",
    );
  });
});
