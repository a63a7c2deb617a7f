import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import type { ApiCallOptions } from "../support/service.js";
import { startTestService, type TestService } from "../support/service.js";

// Hostile input, row by row: each request is refused with the status it names, in the standard error
// shape, and the database is exactly as it was before (every row of every table but the API keys' last
// use, which each authenticated request moves).

let open: TestService; // the standalone default: private destinations allowed
let strict: TestService; // a cluster install: private destinations refused
let projectId: number;
let webhookId: number;

async function snapshot(pool: Pool): Promise<string[]> {
  const tables = await pool.query<{ name: string }>(
    "SELECT format('%I', tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'api_keys' ORDER BY 1",
  );
  const rows: string[] = [];
  for (const { name } of tables.rows) {
    const result = await pool.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t ORDER BY 1`);
    rows.push(`-- ${name}`, ...result.rows.map(({ row }) => row));
  }
  const keys = await pool.query<{ row: string }>(
    "SELECT (id, name, key_hash, project_ids)::text AS row FROM api_keys",
  );
  return [...rows, ...keys.rows.map(({ row }) => row)];
}

async function expectRefused(
  service: TestService,
  method: string,
  path: string,
  options: ApiCallOptions,
  status: number,
): Promise<string> {
  const before = await snapshot(service.pool);
  const response = await service.api(method, path, options);
  expect(response.status, response.text).toBe(status);
  expect(Object.keys(response.body ?? {})).toEqual(["error"]);
  expect(response.body.error.message).toEqual(expect.any(String));
  expect(await snapshot(service.pool)).toEqual(before);
  return response.body.error.message;
}

beforeAll(async () => {
  open = await startTestService();
  strict = await startTestService({ DELIVERY_ALLOW_PRIVATE_NETWORKS: "false" });
  for (const service of [open, strict]) {
    const project = await createProject(service, "target", "Target");
    const webhook = await createWebhook(service, project, {
      url: "https://example.com/hook",
      events: ["deployment.succeeded"],
      secret: "whsec_kept",
    });
    // Both databases are fresh copies of one template, so the same ids name the same rows in each.
    if (projectId !== undefined) expect([project, webhook.id]).toEqual([projectId, webhookId]);
    projectId = project;
    webhookId = webhook.id;
  }
});
afterAll(async () => {
  await open?.close();
  await strict?.close();
});

const nested = (depth: number, inner: string) => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
const webhooks = () => `/projects/${projectId}/webhooks`;
const webhook = () => `/projects/${projectId}/webhooks/${webhookId}`;

describe("bodies: content types, sizes, nesting", () => {
  it.each<[string, ApiCallOptions, number]>([
    [
      "text/plain",
      { rawBody: '{"url":"https://e.com","events":["deployment.failed"]}', contentType: "text/plain" },
      400,
    ],
    [
      "form encoding",
      {
        rawBody: "url=https://e.com&events=deployment.failed",
        contentType: "application/x-www-form-urlencoded",
      },
      400,
    ],
    [
      "latin-1 charset",
      { rawBody: '{"url":"https://e.com"}', contentType: "application/json; charset=latin1" },
      400,
    ],
    [
      "malformed JSON",
      { rawBody: '{"url": "https://e.com", "events": [', contentType: "application/json" },
      400,
    ],
    ["JSON null", { rawBody: "null" }, 400],
    ["a bare string", { rawBody: '"https://e.com"' }, 400],
    [
      "over 64 KB",
      { rawBody: JSON.stringify({ url: `https://e.com/${"a".repeat(70_000)}`, events: [] }) },
      413,
    ],
    [
      "events nested 5,000 arrays deep",
      { rawBody: `{"url":"https://e.com","events":${nested(5000, '"deployment.failed"')}}` },
      400,
    ],
    [
      "events holding a 5,000-deep object",
      { rawBody: `{"url":"https://e.com","events":[${'{"a":'.repeat(5000)}1${"}".repeat(5000)}]}` },
      400,
    ],
    ["a body nested 5,000 arrays deep", { rawBody: nested(5000, "1") }, 400],
    [
      "an event name of 10,000 characters",
      { body: { url: "https://e.com", events: ["x".repeat(10_000)] } },
      400,
    ],
    [
      "a secret of 257 characters",
      { body: { url: "https://e.com", events: ["deployment.failed"], secret: "s".repeat(257) } },
      400,
    ],
    [
      "a prototype key",
      { rawBody: '{"url":"https://e.com","events":["deployment.failed"],"__proto__":{"enabled":false}}' },
      400,
    ],
    [
      "a custom header named __proto__ (it was dropped: 201, header_names [])",
      { rawBody: '{"url":"https://e.com","events":["deployment.failed"],"headers":{"__proto__":"x"}}' },
      400,
    ],
    [
      "a custom header named constructor",
      { body: { url: "https://e.com", events: ["deployment.failed"], headers: { constructor: "x" } } },
      400,
    ],
  ])("POST webhooks with %s: %i", async (_name, options, status) => {
    await expectRefused(open, "POST", webhooks(), options, status);
  });

  it("does not quote a hostile value back into the message", async () => {
    const message = await expectRefused(
      open,
      "POST",
      webhooks(),
      { body: { url: "https://e.com", events: ["x".repeat(10_000)] } },
      400,
    );
    expect(message.length).toBeLessThan(1_000);
  });
});

describe("unknown field names: quoted back cut short", () => {
  it("answers a 60 KB body of long unknown field names with a short message naming a few", async () => {
    const names = Array.from({ length: 600 }, (_, i) => `${String(i).padStart(3, "0")}${"k".repeat(97)}`);
    const body = {
      url: "https://e.com",
      events: ["deployment.failed"],
      ...Object.fromEntries(names.map((n) => [n, 1])),
    };
    expect(JSON.stringify(body).length).toBeGreaterThan(60_000);
    const before = await snapshot(open.pool);
    const response = await open.api("POST", webhooks(), { body });
    expect(response.status).toBe(400);
    expect(await snapshot(open.pool)).toEqual(before);
    // Was 120 KB: every name quoted whole, twice (message and details).
    expect(response.text.length).toBeLessThan(2_000);
    expect(response.body.error.details).toEqual([
      {
        path: "body",
        message: `Unrecognized keys: ${names
          .slice(0, 5)
          .map((n) => `"${n.slice(0, 40)}…"`)
          .join(", ")} and 595 more`,
      },
    ]);
  });

  it("describes twenty problems of a body with thousands, and counts the rest", async () => {
    const body = { name: "many", project_ids: Array.from({ length: 5_000 }, () => "x") };
    const message = await expectRefused(open, "POST", "/api-keys", { body }, 400);
    expect(message).toMatch(/; and 4980 more problems$/);
    expect(message.length).toBeLessThan(3_000);
  });
});

describe("names: text Postgres can hold", () => {
  // Found by the schemathesis fuzz: a NUL in an API key's name reached the insert and answered 500.
  it.each([
    ["/api-keys", { name: "key\u0000" }],
    ["/api-keys", { name: "\u0000" }],
    ["/projects", { name: "P\u0000roject", slug: "nul-name" }],
  ])("POST %s with a NUL in the name: 400", async (path, body) => {
    const message = await expectRefused(open, "POST", path, { body }, 400);
    expect(message).toMatch(/name must not contain NUL characters/);
  });
});

describe("ids and query integers: decimal digits only", () => {
  const ids = [
    "1e2",
    "0x10",
    "%201",
    "1%20",
    "+1",
    "1.5",
    "-1",
    "0",
    "00x1",
    "9007199254740992",
    "99999999999999999999",
    "%D9%A1",
    "Infinity",
    "NaN",
  ];

  it.each(ids.flatMap((id) => ["GET", "PUT", "DELETE"].map((method) => [method, id] as const)))(
    "%s /projects/{id}/webhooks/%s: 400",
    async (method, id) => {
      const options = method === "PUT" ? { body: { enabled: false } } : {};
      const message = await expectRefused(
        open,
        method,
        `/projects/${projectId}/webhooks/${id}`,
        options,
        400,
      );
      expect(message).toMatch(/webhook_id/);
    },
  );

  it.each(["1e2", "0x10", "1.5", "", "abc", " 2"])("page_size=%j: 400", async (value) => {
    await expectRefused(open, "GET", `${webhooks()}?page_size=${encodeURIComponent(value)}`, {}, 400);
  });

  it.each(["0", "99999999999999999999", "9007199254740992"])("page=%s: 400", async (value) => {
    await expectRefused(open, "GET", `${webhooks()}?page=${value}`, {}, 400);
  });

  it("clamps a 20-digit page_size and limit instead of refusing them", async () => {
    const page = await open.api("GET", `${webhooks()}?page_size=99999999999999999999`);
    expect(page.status).toBe(200);
    expect(page.body.page_size).toBe(100);
    const deliveries = await open.api("GET", `${webhook()}/deliveries?limit=99999999999999999999`);
    expect(deliveries.status).toBe(200);
  });

  it.each(["0", "101", "99999999999999999999", "1e1"])(
    "per_page=%s on the project list: 400",
    async (value) => {
      await expectRefused(open, "GET", `/projects?per_page=${value}`, {}, 400);
    },
  );
});

describe("URL forms", () => {
  it.each([
    "http://user:pw@example.com/hook",
    "http://user@example.com/hook",
    "https://:secret@example.com/",
    "ftp://example.com/hook",
    "javascript:alert(1)",
    "http:/example.com/hook",
    "http://",
    "http://exa mple.com/",
    "http://example.com:99999/",
    "http://[::1/",
    "//example.com/hook",
    "http://example.com/\u0000",
    // A fragment is never sent: the URL would name one host and deliveries reach another.
    "http://rcv.example#@127.0.0.1:31101/",
    "https://example.com/hook#fragment",
    // Other spellings of 127.0.0.1.
    "http://127.1/h",
    "http://2130706433/h",
    "http://0x7f.1/h",
    "http://0177.0.0.1/h",
  ])("%j: 400 on create and on update", async (url) => {
    await expectRefused(open, "POST", webhooks(), { body: { url, events: ["deployment.failed"] } }, 400);
    await expectRefused(open, "PUT", webhook(), { body: { url } }, 400);
  });
});

describe("destinations: refused ranges as IP literals, in IPv4 and IPv6 spellings", () => {
  // Refused always, whatever the policy: metadata, link-local, unspecified, multicast, reserved, and
  // the same addresses carried in IPv6 (mapped, NAT64, 6to4, Teredo) or in other IPv4 spellings.
  const alwaysRefused = [
    "169.254.169.254",
    "[::ffff:169.254.169.254]",
    "[::ffff:a9fe:a9fe]",
    "[64:ff9b::a9fe:a9fe]",
    "[64:ff9b::169.254.169.254]",
    "[2002:a9fe:a9fe::1]",
    "[2001:0:4136:e378:8000:63bf:5601:5601]",
    "[fe80::1]",
    "[fd00:ec2::254]",
    "100.100.100.200",
    "192.0.0.192",
    "0.0.0.0",
    "[::]",
    "224.0.0.1",
    "[ff02::1]",
    "255.255.255.255",
    "240.0.0.1",
    "198.18.0.1",
    "192.0.2.1",
    "[2001:db8::1]",
    "[::a9fe:a9fe]",
    "[64:ff9b:1::1]",
  ];
  // Refused where private destinations are (the cluster default), allowed in standalone development.
  const privateOnes = [
    "127.0.0.1",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:a00:1::]",
    "[fc00::1]",
    "[fd12:3456::1]",
  ];

  // Other spellings of an IPv4 address (one number, hex, octal, fewer parts) are refused as URLs: only
  // dotted decimal is accepted, so what a URL names is what a reader sees.
  it.each([
    "2852039166",
    "0xa9fea9fe",
    "0251.0376.0251.0376",
    "169.254.43518",
    "0",
    "2130706433",
    "127.1",
    "0x7f.1",
  ])("http://%s/: 400 (IPv4 only as dotted decimal)", async (host) => {
    await expectRefused(
      open,
      "POST",
      webhooks(),
      { body: { url: `http://${host}/`, events: ["deployment.failed"] } },
      400,
    );
    await expectRefused(open, "PUT", webhook(), { body: { url: `http://${host}/` } }, 400);
  });

  it.each(alwaysRefused)("http://%s/: 403 even where private destinations are allowed", async (host) => {
    const message = await expectRefused(
      open,
      "POST",
      webhooks(),
      { body: { url: `http://${host}/`, events: ["deployment.failed"] } },
      403,
    );
    expect(message).toMatch(/refused as a delivery destination/);
    await expectRefused(open, "PUT", webhook(), { body: { url: `http://${host}:8080/x` } }, 403);
  });

  it.each(privateOnes)("http://%s/: 403 where private destinations are refused", async (host) => {
    const message = await expectRefused(
      strict,
      "POST",
      webhooks(),
      { body: { url: `http://${host}/`, events: ["deployment.failed"] } },
      403,
    );
    expect(message).toMatch(/private destinations are not allowed/);
    await expectRefused(strict, "PUT", webhook(), { body: { url: `http://${host}/` } }, 403);
  });

  it("refuses a host name that resolves to loopback when it connects, sending nothing", async () => {
    const created = await strict.api("POST", webhooks(), {
      body: { url: "http://localhost:9/hook", events: ["deployment.failed"] },
    });
    expect(created.status).toBe(201);
    const test = await strict.api("POST", `${webhooks()}/${created.body.id}/test`, { body: {} });
    expect(test.body).toMatchObject({ success: false, status_code: 0 });
    expect(test.body.error_message).toMatch(
      /^Destination refused for http:\/\/localhost:9\/hook: (127\.0\.0\.1|::1) is a loopback address/,
    );
    // Nothing went out, so the record shows no request headers.
    const record = await strict.api(
      "GET",
      `${webhooks()}/${created.body.id}/deliveries/${test.body.delivery_id}`,
    );
    expect(record.body).toMatchObject({ success: false, status_code: 0, request_headers: null });
  });
});

describe("methods", () => {
  // fetch refuses to send TRACE, so these go through node:http.
  function send(
    method: string,
    path: string,
  ): Promise<{ status: number; allow: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${open.baseUrl}/api${path}`, {
        method,
        headers: { authorization: `Bearer ${open.adminKey}` },
      });
      req.on("error", reject);
      req.on("response", (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
      });
      req.end();
    });
  }

  it.each(["TRACE", "PATCH"])("%s on a known path: 405 with Allow, nothing changed", async (method) => {
    const before = await snapshot(open.pool);
    const response = await send(method, webhook());
    expect(response.status).toBe(405);
    expect(response.allow).toBe("GET, PUT, DELETE");
    expect(JSON.parse(response.body).error.code).toBe("method_not_allowed");
    expect(await snapshot(open.pool)).toEqual(before);
  });

  it("OPTIONS on a known path: 204 with Allow", async () => {
    const response = await send("OPTIONS", webhooks());
    expect(response.status).toBe(204);
    expect(response.allow).toBe("POST, GET");
  });
});
