import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretKey } from "../support/secret-keys.js";
import { waitUntil } from "../support/wait.js";

// Custom header values are write-only: the built service, logging at debug, never writes one to its
// log, whatever it does with them (a create, a refused update, a preview, deliveries that fail).

const headerValue = "Bearer sk-live-9f8e7d6c5b4a";
const apiKey = "logs-test-admin-key-0123456789";
let database: TestDatabase;
let receiver: Receiver;

beforeAll(async () => {
  assertBuilt();
  [database, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
  receiver.on("/fails", (_request, res) => res.writeHead(500).end("no"));
});
afterAll(async () => {
  await Promise.all([database?.drop(), receiver?.close()]);
});

it("never logs a custom header's value", async () => {
  const child = spawn(process.execPath, ["dist/server/main.js", "serve"], {
    env: {
      PATH: process.env.PATH,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "debug",
      KUBERNETES: "false",
      DATABASE_URL: database.url,
      API_KEY: apiKey,
      SECRET_ENCRYPTION_KEYS: testSecretKey,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  try {
    const base = await waitUntil(
      "the listening line with its URL",
      async () => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1],
      { timeoutMs: 20_000 },
    );
    const api = async (method: string, path: string, request?: unknown) => {
      const response = await fetch(`${base}/api${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: request === undefined ? undefined : JSON.stringify(request),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the test reads a few fields of the API's JSON
      const answer: any = await response.json().catch(() => undefined);
      return { status: response.status, body: answer };
    };
    const project = await api("POST", "/projects", { name: "Shop", slug: "shop" });
    const webhook = await api("POST", `/projects/${project.body.id}/webhooks`, {
      url: `${receiver.url}/fails`,
      events: ["deployment.succeeded"],
      headers: { Authorization: headerValue },
      retry_policy: { max_attempts: 2 },
    });
    expect(webhook.status).toBe(201);
    const path = `/projects/${project.body.id}/webhooks/${webhook.body.id}`;
    expect((await api("PUT", path, { headers: { "X-Token": `${headerValue}\r\nX: 1` } })).status).toBe(400);
    expect((await api("POST", `${path}/preview`, {})).status).toBe(200);
    expect((await api("POST", `${path}/test`, {})).body.status_code).toBe(500);
    await waitUntil("receiver.requests.length >= 1", async () =>
      receiver.requests.length >= 1 ? true : undefined,
    );
    expect(receiver.requests[0]?.headers.authorization).toBe(headerValue);
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
  // The log was written at debug level; no line of it holds the value.
  expect(output).toMatch(/"level":20/);
  expect(output).not.toContain("sk-live");
});
