import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapApiKey } from "../../src/api-keys/bootstrap.js";
import { hashApiKey } from "../../src/api-keys/keys.js";
import { findApiKeyByHash } from "../../src/api-keys/store.js";
import { migrate } from "../../src/db/migrate.js";
import { createPool, type Pool } from "../../src/db/pool.js";
import { createLogger } from "../../src/logger.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { testSecretBox } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let projectA: number;
let projectB: number;

async function count(table: string): Promise<number> {
  const { rows } = await service.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]?.n ?? -1;
}

async function webhookRow(id: number): Promise<unknown> {
  const { rows } = await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [id]);
  return rows[0];
}

/** A request with an arbitrary (possibly malformed) Authorization header, or none. */
async function rawRequest(method: string, apiPath: string, authorization?: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${service.baseUrl}${apiPath}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, body: text === "" ? undefined : JSON.parse(text) };
}

function expectUnauthorized(response: { status: number; body: unknown }) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
  expect((response.body as { error: { message: string } }).error.message.length).toBeGreaterThan(0);
}

async function issueKey(body: Record<string, unknown>) {
  const response = await service.api("POST", "/api-keys", { body });
  expect(response.status).toBe(201);
  expect(typeof response.body.key).toBe("string");
  return response.body as { id: number; key: string; project_ids: number[] | null };
}

beforeAll(async () => {
  service = await startTestService();
  projectA = await createProject(service, "project-a");
  projectB = await createProject(service, "project-b");
});
afterAll(() => service.close());

describe("requests without a valid API key", () => {
  it("answers 401 with the error shape when Authorization is missing, and writes nothing", async () => {
    const before = await count("projects");
    const response = await rawRequest("POST", "/api/projects", undefined, { name: "x", slug: "x" });
    expectUnauthorized(response);
    expect(response.body.error.message).toMatch(/Bearer/);
    expect(await count("projects")).toBe(before);
  });

  it.each([
    ["Basic scheme", "Basic x"],
    [
      "Basic scheme carrying the real key",
      `Basic ${Buffer.from("test-admin-key-0123456789").toString("base64")}`,
    ],
    ["Bearer with nothing", "Bearer"],
    ["Bearer with only spaces", "Bearer    "],
    ["Bearer with two tokens", "Bearer test-admin-key-0123456789 extra"],
    ["the key without a scheme", "test-admin-key-0123456789"],
  ])("answers 401 for a malformed header (%s)", async (_name, header) => {
    const before = await count("webhooks");
    const response = await rawRequest("POST", `/api/projects/${projectA}/webhooks`, header, {
      url: "https://example.com/hook",
      events: ["deployment.succeeded"],
    });
    expectUnauthorized(response);
    expect(await count("webhooks")).toBe(before);
  });

  it("answers 401 for a well-formed but unknown key, and writes nothing", async () => {
    const before = await count("webhooks");
    const response = await service.api("POST", `/projects/${projectA}/webhooks`, {
      key: "wo_this-key-does-not-exist-anywhere",
      body: { url: "https://example.com/hook", events: ["deployment.succeeded"] },
    });
    expectUnauthorized(response);
    expect(await count("webhooks")).toBe(before);
  });

  it("accepts the scheme name case-insensitively with the right key (control)", async () => {
    const response = await rawRequest("GET", "/api/webhook-event-types", `bearer ${service.adminKey}`);
    expect(response.status).toBe(200);
  });

  it("protects every documented endpoint, including GET /webhook-event-types and unknown /api paths", async () => {
    const docs = await rawRequest("GET", "/api/docs");
    expect(docs.status).toBe(200);
    const operations: [string, string][] = [];
    for (const [openApiPath, item] of Object.entries(docs.body.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) {
        if (["get", "post", "put", "delete", "patch"].includes(method)) {
          operations.push([method.toUpperCase(), openApiPath.replace(/\{\w+\}/g, "1")]);
        }
      }
    }
    expect(operations).toContainEqual(["GET", "/api/webhook-event-types"]);
    expect(operations.length).toBeGreaterThanOrEqual(9);
    operations.push(["GET", "/api/no-such-endpoint"]);
    for (const [method, apiPath] of operations) {
      for (const header of [undefined, "Basic x", "Bearer wrong-key-0123456789abcdef"]) {
        const response = await rawRequest(method, apiPath, header);
        expect({ method, apiPath, header, status: response.status }).toEqual({
          method,
          apiPath,
          header,
          status: 401,
        });
        expectUnauthorized(response);
      }
    }
  });

  it("serves /api/docs, /healthz and /readyz without a key", async () => {
    const docs = await rawRequest("GET", "/api/docs");
    expect(docs.status).toBe(200);
    expect(docs.body.openapi).toMatch(/^3\.1\./);
    const health = await rawRequest("GET", "/healthz");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    const ready = await rawRequest("GET", "/readyz");
    expect(ready.status).toBe(200);
  });
});

describe("admin and project-scoped keys", () => {
  let scoped: { id: number; key: string; project_ids: number[] | null };
  let webhookOfB: number;

  beforeAll(async () => {
    scoped = await issueKey({ name: "ci for A", project_ids: [projectA] });
    webhookOfB = (
      await createWebhook(service, projectB, {
        url: "https://example.com/hook",
        events: ["deployment.succeeded"],
      })
    ).id;
  });

  it("lets the admin key see every project", async () => {
    const response = await service.api("GET", "/projects");
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(2);
    expect(response.body.projects.map((p: { id: number }) => p.id).sort()).toEqual(
      [projectA, projectB].sort(),
    );
  });

  it("shows the issued key once: the create response has it, GET /api-keys never does", async () => {
    expect(scoped.project_ids).toEqual([projectA]);
    expect(scoped.key.length).toBeGreaterThanOrEqual(32);
    const list = await service.api("GET", "/api-keys");
    expect(list.status).toBe(200);
    const listed = list.body.find((k: { id: number }) => k.id === scoped.id);
    expect(listed).toMatchObject({ id: scoped.id, name: "ci for A", project_ids: [projectA] });
    expect(listed).not.toHaveProperty("key");
    for (const item of list.body) expect(item).not.toHaveProperty("key");
    expect(list.text).not.toContain(scoped.key);
    expect(list.text).not.toContain(service.adminKey);
  });

  it("refuses to scope a key to projects that do not exist, writing nothing", async () => {
    const before = await service.pool.query("SELECT count(*)::int AS n FROM api_keys");
    const response = await service.api("POST", "/api-keys", {
      body: { name: "ghost", project_ids: [projectA, 987654] },
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toEqual({ code: "not_found", message: "Unknown project ids: 987654." });
    const after = await service.pool.query("SELECT count(*)::int AS n FROM api_keys");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("stores keys hashed: no column of api_keys contains the key text", async () => {
    const { rows } = await service.pool.query<{ row: string }>(
      "SELECT row_to_json(k)::text AS row FROM api_keys k",
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const { row } of rows) {
      expect(row).not.toContain(scoped.key);
      expect(row).not.toContain(service.adminKey);
    }
    // The stored value is the SHA-256 digest of the key.
    const byHash = await service.pool.query("SELECT id FROM api_keys WHERE key_hash = $1", [
      hashApiKey(scoped.key),
    ]);
    expect(byHash.rows).toEqual([{ id: scoped.id }]);
    const plain = await service.pool.query(
      "SELECT id FROM api_keys WHERE position(convert_to($1, 'UTF8') in key_hash) > 0 OR name = $1",
      [scoped.key],
    );
    expect(plain.rows).toEqual([]);
  });

  it("lists only its own project with a scoped key", async () => {
    const response = await service.api("GET", "/projects", { key: scoped.key });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(1);
    expect(response.body.projects.map((p: { id: number }) => p.id)).toEqual([projectA]);
  });

  it("works on its own project's webhooks with a scoped key (control)", async () => {
    const created = await service.api("POST", `/projects/${projectA}/webhooks`, {
      key: scoped.key,
      body: { url: "https://example.com/a", events: ["deployment.failed"] },
    });
    expect(created.status).toBe(201);
    expect(created.body.project_id).toBe(projectA);
    const list = await service.api("GET", `/projects/${projectA}/webhooks`, { key: scoped.key });
    expect(list.status).toBe(200);
    expect(list.body.map((w: { id: number }) => w.id)).toContain(created.body.id);
  });

  it("answers 404 for every webhook operation on another project, and writes nothing", async () => {
    const before = await webhookRow(webhookOfB);
    expect(before).toBeDefined();
    const webhooksBefore = await count("webhooks");
    const base = `/projects/${projectB}/webhooks`;
    const calls: [string, string, unknown][] = [
      ["GET", base, undefined],
      ["POST", base, { url: "https://example.com/evil", events: ["deployment.succeeded"] }],
      ["GET", `${base}/${webhookOfB}`, undefined],
      ["PUT", `${base}/${webhookOfB}`, { url: "https://example.com/evil", enabled: false }],
      ["DELETE", `${base}/${webhookOfB}`, undefined],
      ["GET", `${base}/${webhookOfB}/deliveries`, undefined],
      ["GET", `/projects/${projectB}/deployments`, undefined],
    ];
    for (const [method, apiPath, body] of calls) {
      const response = await service.api(method, apiPath, { key: scoped.key, body });
      expect({ method, apiPath, status: response.status }).toEqual({ method, apiPath, status: 404 });
      expect(response.body.error.code).toBe("not_found");
      expect(response.text).not.toContain("example.com/hook");
    }
    expect(await count("webhooks")).toBe(webhooksBefore);
    expect(await webhookRow(webhookOfB)).toEqual(before);
  });

  it("answers 403 forbidden for admin-only operations with a scoped key, and writes nothing", async () => {
    const projectsBefore = await count("projects");
    const keysBefore = await count("api_keys");
    const calls: [string, string, unknown][] = [
      ["POST", "/projects", { name: "Sneaky", slug: "sneaky" }],
      ["POST", "/api-keys", { name: "escalate" }],
      ["POST", "/api-keys", { name: "escalate", project_ids: [projectB] }],
      ["GET", "/api-keys", undefined],
      ["DELETE", `/api-keys/${scoped.id}`, undefined],
    ];
    for (const [method, apiPath, body] of calls) {
      const response = await service.api(method, apiPath, { key: scoped.key, body });
      expect({ method, apiPath, status: response.status }).toEqual({ method, apiPath, status: 403 });
      expect(response.body).toEqual({ error: { code: "forbidden", message: expect.any(String) } });
    }
    expect(await count("projects")).toBe(projectsBefore);
    expect(await count("api_keys")).toBe(keysBefore);
  });

  it("rejects a revoked key with 401", async () => {
    const temporary = await issueKey({ name: "temporary", project_ids: [projectA] });
    expect((await service.api("GET", "/projects", { key: temporary.key })).status).toBe(200);
    const revoked = await service.api("DELETE", `/api-keys/${temporary.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe("");
    expectUnauthorized(await service.api("GET", "/projects", { key: temporary.key }));
    expectUnauthorized(await service.api("GET", "/webhook-event-types", { key: temporary.key }));
    const { rows } = await service.pool.query("SELECT id FROM api_keys WHERE id = $1", [temporary.id]);
    expect(rows).toEqual([]);
    // Revoking it again: it no longer exists.
    expect((await service.api("DELETE", `/api-keys/${temporary.id}`)).status).toBe(404);
  });
});

describe("webhook secrets are write-only", () => {
  it("never returns the secret from create, get, list or update", async () => {
    const secret = "whsec-never-shown-4f1a9c";
    const created = await service.api("POST", `/projects/${projectA}/webhooks`, {
      body: { url: "https://example.com/signed", events: ["deployment.succeeded"], secret },
    });
    expect(created.status).toBe(201);
    expect(created.body.has_secret).toBe(true);
    const id = created.body.id;
    const base = `/projects/${projectA}/webhooks`;

    const responses = [
      created,
      await service.api("GET", `${base}/${id}`),
      await service.api("GET", base),
      await service.api("GET", `${base}?page=1&page_size=100`),
      await service.api("PUT", `${base}/${id}`, { body: { enabled: false } }),
    ];
    for (const response of responses) {
      expect(response.status).toBeLessThan(300);
      expect(response.text).not.toContain(secret);
      expect(response.text).not.toContain('"secret"');
    }

    const replacement = "whsec-replacement-77b2e0";
    const replaced = await service.api("PUT", `${base}/${id}`, { body: { secret: replacement } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.has_secret).toBe(true);
    expect(replaced.text).not.toContain(replacement);
    expect((await service.api("GET", `${base}/${id}`)).text).not.toContain(replacement);

    // It is stored (deliveries are signed with it), encrypted, and never returned.
    const { rows } = await service.pool.query<{ secret: string }>(
      "SELECT secret FROM webhooks WHERE id = $1",
      [id],
    );
    expect(rows[0]?.secret).not.toContain(replacement);
    expect(testSecretBox().open(rows[0]?.secret ?? "")).toBe(replacement);
  });
});

describe("bootstrapApiKey (real database)", () => {
  const logger = createLogger("silent");
  const databases: TestDatabase[] = [];
  const pools: Pool[] = [];
  let tempDir: string;

  async function freshPool(): Promise<Pool> {
    const database = await createTestDatabase({ empty: true });
    databases.push(database);
    const pool = createPool(database.url, 2);
    pools.push(pool);
    await migrate(pool);
    return pool;
  }

  async function keyCount(pool: Pool): Promise<number> {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys");
    return rows[0]?.n ?? -1;
  }

  beforeAll(async () => {
    tempDir = await mkdtemp(path.join(tmpdir(), "wo-auth-test-"));
  });
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    for (const database of databases) await database.drop();
    await rm(tempDir, { recursive: true, force: true });
  });

  it("generates an admin key once when nothing is configured, and prints it only the first time", async () => {
    const pool = await freshPool();
    expect(await keyCount(pool)).toBe(0);

    const printed: string[] = [];
    await bootstrapApiKey(pool, { value: undefined, file: undefined }, logger, (line) => printed.push(line));
    const keys = printed.join("\n").match(/wo_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(keys).toHaveLength(1);
    const key = keys[0] as string;
    const row = await findApiKeyByHash(pool, hashApiKey(key));
    expect(row).toBeDefined();
    expect(row?.project_ids).toBeNull();
    expect(await keyCount(pool)).toBe(1);

    const printedAgain: string[] = [];
    await bootstrapApiKey(pool, { value: undefined, file: undefined }, logger, (line) =>
      printedAgain.push(line),
    );
    expect(printedAgain).toEqual([]);
    expect(await keyCount(pool)).toBe(1);
    const { rows } = await pool.query<{ row: string }>("SELECT row_to_json(k)::text AS row FROM api_keys k");
    expect(rows[0]?.row).not.toContain(key);
  });

  it("registers a key read from a file (trailing newline trimmed) without printing anything", async () => {
    const pool = await freshPool();
    const key = "file-configured-key-0123456789abcdef";
    const file = path.join(tempDir, "api-key");
    await writeFile(file, `${key}\n`);
    const printed: string[] = [];
    await bootstrapApiKey(pool, { value: undefined, file }, logger, (line) => printed.push(line));
    expect(printed).toEqual([]);

    const row = await findApiKeyByHash(pool, hashApiKey(key));
    expect(row).toBeDefined();
    expect(row?.project_ids).toBeNull();
    expect(await findApiKeyByHash(pool, hashApiKey(`${key}\n`))).toBeUndefined();
    expect(await keyCount(pool)).toBe(1);

    // Registering again on the next start is idempotent.
    await bootstrapApiKey(pool, { value: undefined, file }, logger, (line) => printed.push(line));
    expect(await keyCount(pool)).toBe(1);
    expect(printed).toEqual([]);
  });

  it.each([
    ["too short", "short-key-0123", /is 14 characters long; it must have at least 24/],
    // 16 characters were enough before; a key of that length is within reach of an online guesser.
    ["16 characters", "0123456789abcdef", /is 16 characters long; it must have at least 24/],
    ["long but repetitive", "abcabcabcabcabcabcabcabcabcabc", /too few different characters/],
  ])(
    "rejects a configured key that is %s, says how to make one, and stores nothing",
    async (_name, key, why) => {
      const pool = await freshPool();
      const file = path.join(tempDir, "weak-key");
      await writeFile(file, `${key}\n`);
      const printed: string[] = [];
      const fromValue = bootstrapApiKey(pool, { value: key, file: undefined }, logger, (line) =>
        printed.push(line),
      );
      await expect(fromValue).rejects.toThrow(why);
      await expect(fromValue).rejects.toThrow(/^API_KEY .*openssl rand -hex 24/);
      const fromFile = bootstrapApiKey(pool, { value: undefined, file }, logger, (line) =>
        printed.push(line),
      );
      await expect(fromFile).rejects.toThrow(why);
      await expect(fromFile).rejects.not.toThrow(key);
      expect(printed).toEqual([]);
      expect(await keyCount(pool)).toBe(0);
    },
  );
});
