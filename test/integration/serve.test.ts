import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { version } from "../../src/version.js";
import { assertBuilt } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { waitUntil } from "../support/wait.js";

// `webhook-operator serve` as a process: start-up lines, the embedded Postgres default with its
// generated first key, configuration errors, and graceful shutdown on SIGTERM.

interface Served {
  child: ChildProcessByStdio<null, Readable, Readable>;
  output: () => string;
  url: () => string | undefined;
}

function serve(env: Record<string, string>, args: string[] = []): Served {
  const child = spawn(process.execPath, ["dist/server/main.js", "serve", ...args], {
    env: {
      PATH: process.env.PATH,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      KUBERNETES: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return {
    child,
    output: () => output,
    url: () => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1],
  };
}

async function listening(served: Served): Promise<string> {
  return waitUntil("the service's URL in its output", async () => served.url(), { timeoutMs: 20_000 });
}

async function stopped(served: Served): Promise<number | null> {
  served.child.kill("SIGTERM");
  return new Promise((resolve) => served.child.once("exit", (code) => resolve(code)));
}

let database: TestDatabase;
beforeAll(async () => {
  assertBuilt();
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describe("serve", () => {
  it("says in one line that it runs without a cluster, serves, and stops cleanly on SIGTERM", async () => {
    const served = serve(
      {
        DATABASE_URL: database.url,
        API_KEY: "serve-test-admin-key-1234",
        SECRET_ENCRYPTION_KEYS: Buffer.alloc(32, 1).toString("base64"),
      },
      ["--no-kubernetes"],
    );
    const url = await listening(served);
    expect(served.output()).toContain(
      "no Kubernetes cluster configured: running the API and delivery workers only. Without a cluster no " +
        "rollout emits deployment.* events: only test events",
    );
    // One line says where the dashboard and the API description are (stdout is a pipe here: JSON).
    expect(served.output()).toContain(
      `"msg":"webhook-operator ${version} listening on ${new URL(url).host}: dashboard ${url}/, API description ${url}/api/docs"`,
    );
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const projects = await fetch(`${url}/api/projects`, {
      headers: { authorization: "Bearer serve-test-admin-key-1234" },
    });
    expect(projects.status).toBe(200);
    expect(await stopped(served)).toBe(0);
    expect(served.output()).toContain('"msg":"stopped"');
    expect(served.output()).not.toContain("serve-test-admin-key-1234");
  });

  it("starts the embedded Postgres without DATABASE_URL, prints a generated key once, keeps data across restarts", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "wo-serve-"));
    const env = { DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(await freePort()) };
    try {
      const first = serve(env);
      const url = await listening(first);
      const key = /\s(wo_[A-Za-z0-9_-]{43})\s/.exec(first.output())?.[1];
      expect(key).toBeDefined();
      const created = await fetch(`${url}/api/projects`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Kept", slug: "kept" }),
      });
      expect(created.status).toBe(201);
      // Standalone says what it left open and where the secret encryption key it generated lives.
      expect(first.output()).toContain("may reach loopback and private networks");
      expect(first.output()).toContain("encrypted with a key kept in DATA_DIR");
      const keyFile = await stat(path.join(dataDir, "secret-encryption-keys"));
      expect(keyFile.mode & 0o777).toBe(0o600);
      expect(await stopped(first)).toBe(0);

      const second = serve(env);
      const secondUrl = await listening(second);
      expect(second.output()).not.toContain("generated");
      const list = await fetch(`${secondUrl}/api/projects`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await list.json()) as { projects: { slug: string }[] };
      expect(body.projects.map((p) => p.slug)).toEqual(["kept"]);
      expect(await stopped(second)).toBe(0);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("writes readable lines with LOG_FORMAT=pretty, secrets still redacted", async () => {
    const served = serve({
      DATABASE_URL: database.url,
      API_KEY: "serve-test-admin-key-1234",
      SECRET_ENCRYPTION_KEYS: Buffer.alloc(32, 1).toString("base64"),
      LOG_FORMAT: "pretty",
    });
    const url = await waitUntil(
      "the listening line with its URL",
      async () => /url: "(http:\/\/[^"]+)"/.exec(served.output())?.[1],
      { timeoutMs: 20_000 },
    );
    expect(served.output()).toMatch(
      new RegExp(
        `^\\[[\\d:.]+\\] INFO: webhook-operator ${version} listening on [\\d.:]+: dashboard ${url}/, API description ${url}/api/docs$`,
        "m",
      ),
    );
    expect(await stopped(served)).toBe(0);
    expect(served.output()).not.toContain('{"level"');

    const logged = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { createLogger } from "./dist/src/logger.js";
         createLogger("info", "pretty").info({ webhook: { secret: "hunter2" }, headers: { authorization: "Bearer k3y" } }, "with secrets");`,
      ],
      { encoding: "utf8" },
    );
    expect(logged.stdout).toContain("INFO: with secrets");
    expect(logged.stdout).toContain("[redacted]");
    expect(logged.stdout).not.toMatch(/hunter2|k3y/);
  });

  it("refuses bad configuration with a message naming the variable", async () => {
    const served = serve({ DATABASE_URL: database.url, PORT: "eighty", DELIVERY_CONCURRENCY: "0" });
    const code = await new Promise((resolve) => served.child.once("exit", resolve));
    expect(code).toBe(1);
    expect(served.output()).toContain("PORT: must be a whole number");
    expect(served.output()).toContain("DELIVERY_CONCURRENCY");
    expect(served.output()).not.toMatch(/^\s+at /m);
  });
});
