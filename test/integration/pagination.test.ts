import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertDeployment } from "../../src/deployments/store.js";
import { type ApiResponse, startTestService, type TestService } from "../support/service.js";
import { webhookFields } from "../support/spec-fields.js";

// Spec §4.2 / §7 / §8: the two page-based families.
//  - per_page (GET /projects, GET /projects/{id}/deployments): default 10, 1–100 else 400, page ≥ 1.
//  - page_size (GET /projects/{id}/webhooks): bare array without page/page_size; otherwise the shared
//    envelope {data,total,page,page_size} with page_size default 20 and clamped to 1–100.
// Every list is newest first: created_at desc, id desc among equal timestamps.

const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const base = Date.parse("2026-01-01T00:00:00.000Z");

let service: TestService;

interface Keyed {
  id: number;
  createdAt: string;
}

/** Newest first, id desc among equal created_at: computed here, independently of the SQL. */
function newestFirst(rows: Keyed[]): number[] {
  return [...rows]
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id - a.id)
    .map((row) => row.id);
}

/** A permutation of 0..n-1 that is not the identity, so created_at order differs from id order. */
function scrambledSeconds(n: number): number[] {
  const step = [7, 11, 13, 17].find((candidate) => n % candidate !== 0) ?? 1;
  return Array.from({ length: n }, (_, i) => (i * step) % n);
}

async function setCreatedAt(table: "projects" | "deployments" | "webhooks", rows: Keyed[]): Promise<void> {
  await service.pool.query(
    `UPDATE ${table} t SET created_at = v.ts FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, ts)
      WHERE t.id = v.id`,
    [rows.map((row) => row.id), rows.map((row) => row.createdAt)],
  );
}

/** Gives ids distinct, scrambled created_at values (seconds after `base`, plus an offset). */
async function scrambleCreatedAt(
  table: "projects" | "deployments" | "webhooks",
  ids: number[],
  offsetSeconds = 0,
): Promise<Keyed[]> {
  const seconds = scrambledSeconds(ids.length);
  const rows = ids.map((id, i) => ({
    id,
    createdAt: new Date(base + ((seconds[i] ?? 0) + offsetSeconds) * 1000).toISOString(),
  }));
  await setCreatedAt(table, rows);
  return rows;
}

function expectValidationError(response: ApiResponse, param: string): void {
  expect(response.status).toBe(400);
  expect(Object.keys(response.body)).toEqual(["error"]);
  expect(response.body.error.code).toBe("validation_failed");
  expect(typeof response.body.error.message).toBe("string");
  expect(response.body.error.message).toContain(`query.${param}`);
  expect(response.body.error.details).toEqual(
    expect.arrayContaining([expect.objectContaining({ path: `query.${param}` })]),
  );
}

function expectNotFound(response: ApiResponse): void {
  expect(response.status).toBe(404);
  expect(response.body.error.code).toBe("not_found");
  expect(typeof response.body.error.message).toBe("string");
  expect(response.body.error.message.length).toBeGreaterThan(0);
}

interface Walk {
  ids: number[];
  pages: number;
  totals: number[];
}

/** The client loop of §4.2: fetch pages in order until `total` items are collected or a page is empty. */
async function walkPages(
  pathFor: (page: number) => string,
  itemsKey: string,
  perPageKey: string,
  size: number,
): Promise<Walk> {
  const ids: number[] = [];
  const totals: number[] = [];
  let total = Number.POSITIVE_INFINITY;
  let page = 1;
  while (ids.length < total) {
    const response = await service.api("GET", pathFor(page));
    expect(response.status).toBe(200);
    expect(response.body.page).toBe(page);
    expect(response.body[perPageKey]).toBe(size);
    total = response.body.total;
    totals.push(total);
    const items: { id: number }[] = response.body[itemsKey];
    expect(items.length).toBeLessThanOrEqual(size);
    if (items.length === 0) break;
    ids.push(...items.map((item) => item.id));
    page += 1;
    if (page > 1_000) throw new Error("pagination did not terminate");
  }
  return { ids, pages: page - 1, totals };
}

async function createProjects(count: number, prefix: string): Promise<number[]> {
  const { rows } = await service.pool.query<{ id: number }>(
    `INSERT INTO projects (name, slug)
     SELECT $2 || ' ' || g, $2 || '-' || g FROM generate_series(1, $1::int) AS g RETURNING id`,
    [count, prefix],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

async function createDeployments(projectId: number, count: number): Promise<number[]> {
  const { rows } = await service.pool.query<{ id: number }>(
    `INSERT INTO deployments (project_id, name, environment, branch, commit_sha, commit_message, status, started_at)
     SELECT $1, 'web-' || g, 'production', 'main', md5(g::text), 'commit ' || g, 'pending', clock_timestamp()
       FROM generate_series(1, $2::int) AS g RETURNING id`,
    [projectId, count],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

async function createWebhooks(projectId: number, count: number): Promise<number[]> {
  const { rows } = await service.pool.query<{ id: number }>(
    `INSERT INTO webhooks (project_id, url, secret, events, enabled)
     SELECT $1, 'https://example.com/hooks/' || g, CASE WHEN g % 2 = 0 THEN 'secret-' || g END,
            ARRAY['deployment.succeeded'], g % 3 <> 0
       FROM generate_series(1, $2::int) AS g RETURNING id`,
    [projectId, count],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

const projectCount = 23;
let projectRows: Keyed[];
let projectsNewestFirst: number[];
let deploymentProject: number;
let otherDeploymentProject: number;
let webhookProject: number;
let tieProject: number;

beforeAll(async () => {
  service = await startTestService();
  const ids = await createProjects(projectCount, "proj");
  projectRows = await scrambleCreatedAt("projects", ids);
  projectsNewestFirst = newestFirst(projectRows);
  [deploymentProject, otherDeploymentProject, webhookProject, tieProject] = ids as [
    number,
    number,
    number,
    number,
  ];
});
afterAll(() => service.close());

describe("GET /projects (per_page family)", () => {
  it("defaults to page 1 and per_page 10, newest first, with the total of all projects", async () => {
    const response = await service.api("GET", "/projects");
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["page", "per_page", "projects", "total"]);
    expect(response.body).toMatchObject({ total: projectCount, page: 1, per_page: 10 });
    expect(response.body.projects.map((p: { id: number }) => p.id)).toEqual(projectsNewestFirst.slice(0, 10));
    for (const project of response.body.projects) {
      expect(typeof project.id).toBe("number");
      expect(typeof project.name).toBe("string");
      expect(typeof project.slug).toBe("string");
      expect(project.created_at).toMatch(isoMillis);
      expect(project.updated_at).toMatch(isoMillis);
      const seeded = projectRows.find((row) => row.id === project.id);
      expect(project.created_at).toBe(seeded?.createdAt);
    }
    // Explicit defaults give the very same page.
    const explicit = await service.api("GET", "/projects?page=1&per_page=10");
    expect(explicit.body).toEqual(response.body);
  });

  it("serves later pages, the short last page, and an empty page past the end with the real total", async () => {
    const second = await service.api("GET", "/projects?page=2");
    expect(second.body.projects.map((p: { id: number }) => p.id)).toEqual(projectsNewestFirst.slice(10, 20));
    const last = await service.api("GET", "/projects?page=3");
    expect(last.body).toMatchObject({ total: projectCount, page: 3, per_page: 10 });
    expect(last.body.projects.map((p: { id: number }) => p.id)).toEqual(projectsNewestFirst.slice(20));

    for (const path of ["/projects?page=4", "/projects?page=2&per_page=100", "/projects?page=1000"]) {
      const past = await service.api("GET", path);
      expect(past.status).toBe(200);
      expect(past.body.projects).toEqual([]);
      expect(past.body.total).toBe(projectCount);
    }
    const far = await service.api("GET", `/projects?page=${Number.MAX_SAFE_INTEGER}&per_page=100`);
    expect(far.status).toBe(200);
    expect(far.body).toEqual({
      projects: [],
      total: projectCount,
      page: Number.MAX_SAFE_INTEGER,
      per_page: 100,
    });
  });

  it("accepts per_page at both bounds", async () => {
    const one = await service.api("GET", "/projects?per_page=1");
    expect(one.status).toBe(200);
    expect(one.body.per_page).toBe(1);
    expect(one.body.projects.map((p: { id: number }) => p.id)).toEqual(projectsNewestFirst.slice(0, 1));
    const hundred = await service.api("GET", "/projects?per_page=100");
    expect(hundred.status).toBe(200);
    expect(hundred.body.per_page).toBe(100);
    expect(hundred.body.projects.map((p: { id: number }) => p.id)).toEqual(projectsNewestFirst);
  });

  it.each(["0", "101", "-1", "1000", "1.5", "abc", "", "NaN", "Infinity"])(
    "rejects per_page=%j with 400 instead of clamping",
    async (value) => {
      expectValidationError(await service.api("GET", `/projects?per_page=${value}`), "per_page");
    },
  );

  it.each(["0", "-1", "1.5", "abc", "", "1e400"])("rejects page=%j with 400", async (value) => {
    expectValidationError(await service.api("GET", `/projects?page=${value}`), "page");
  });

  it("collects every project exactly once when a client walks the pages in order", async () => {
    const walk = await walkPages((page) => `/projects?page=${page}&per_page=7`, "projects", "per_page", 7);
    expect(walk.ids).toEqual(projectsNewestFirst);
    expect(new Set(walk.ids).size).toBe(projectCount);
    expect(walk.pages).toBe(Math.ceil(projectCount / 7));
    expect(new Set(walk.totals)).toEqual(new Set([projectCount]));
  });

  it("keeps a stable order (id desc) when every project has the same created_at", async () => {
    await service.pool.query("UPDATE projects SET created_at = '2026-01-01T00:00:00Z'");
    try {
      const ids = projectRows.map((row) => row.id).sort((a, b) => b - a);
      for (const size of [1, 4, 10]) {
        const walk = await walkPages(
          (page) => `/projects?page=${page}&per_page=${size}`,
          "projects",
          "per_page",
          size,
        );
        expect(walk.ids).toEqual(ids);
      }
    } finally {
      await setCreatedAt("projects", projectRows);
    }
  });

  it("counts and lists only the projects a project-scoped key may see", async () => {
    const visible = [projectsNewestFirst[3], projectsNewestFirst[15], projectsNewestFirst[8]] as number[];
    const created = await service.api("POST", "/api-keys", {
      body: { name: "scoped", project_ids: visible },
    });
    expect(created.status).toBe(201);
    const response = await service.api("GET", "/projects?per_page=2", { key: created.body.key });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(3);
    const expected = projectsNewestFirst.filter((id) => visible.includes(id));
    expect(response.body.projects.map((p: { id: number }) => p.id)).toEqual(expected.slice(0, 2));
    const next = await service.api("GET", "/projects?per_page=2&page=2", { key: created.body.key });
    expect(next.body.projects.map((p: { id: number }) => p.id)).toEqual(expected.slice(2));
  });
});

describe("GET /projects/{project_id}/deployments (per_page family)", () => {
  const count = 23;
  let rows: Keyed[];
  let expected: number[];

  beforeAll(async () => {
    rows = await scrambleCreatedAt("deployments", await createDeployments(deploymentProject, count));
    expected = newestFirst(rows);
    // Another project's deployments, newer than all of these, must not leak into the list or the total.
    await scrambleCreatedAt("deployments", await createDeployments(otherDeploymentProject, 5), 3600);
  });

  const path = (query = "") => `/projects/${deploymentProject}/deployments${query}`;

  it("defaults to page 1 and per_page 10, newest first, counting only this project's deployments", async () => {
    const response = await service.api("GET", path());
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["deployments", "page", "per_page", "total"]);
    expect(response.body).toMatchObject({ total: count, page: 1, per_page: 10 });
    expect(response.body.deployments.map((d: { id: number }) => d.id)).toEqual(expected.slice(0, 10));
    for (const deployment of response.body.deployments) {
      expect(deployment.project_id).toBe(deploymentProject);
    }
  });

  it("returns items with exactly the deployment fields and their types", async () => {
    const row = await insertDeployment(service.pool, {
      projectId: tieProject,
      name: "api",
      environment: "staging",
      branch: "feature/x",
      commitSha: "abc123",
      commitMessage: "Add things",
    });
    await service.pool.query(
      `UPDATE deployments SET status = 'succeeded', url = 'https://api.example.com',
         finished_at = started_at + interval '1.5 seconds' WHERE id = $1`,
      [row.id],
    );
    const response = await service.api("GET", `/projects/${tieProject}/deployments`);
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(1);
    const [item] = response.body.deployments;
    expect(Object.keys(item).sort()).toEqual(
      [
        "id",
        "project_id",
        "name",
        "environment",
        "branch",
        "commit_sha",
        "commit_message",
        "url",
        "status",
        "error_message",
        "started_at",
        "finished_at",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(item).toMatchObject({
      id: row.id,
      project_id: tieProject,
      name: "api",
      environment: "staging",
      branch: "feature/x",
      commit_sha: "abc123",
      commit_message: "Add things",
      url: "https://api.example.com",
      status: "succeeded",
      error_message: null,
    });
    for (const field of ["started_at", "finished_at", "created_at", "updated_at"]) {
      expect(item[field]).toMatch(isoMillis);
    }
    expect(Date.parse(item.finished_at) - Date.parse(item.started_at)).toBe(1500);

    // A pending deployment from the first list: nullable fields are null, not missing.
    const pending = (await service.api("GET", path("?per_page=1"))).body.deployments[0];
    expect(pending).toMatchObject({ status: "pending", url: null, error_message: null, finished_at: null });
    expect(pending.started_at).toMatch(isoMillis);
    await service.pool.query("DELETE FROM deployments WHERE id = $1", [row.id]);
  });

  it("says which workload each rollout was with include=workload only, and refuses another include", async () => {
    const row = await insertDeployment(service.pool, {
      projectId: tieProject,
      workloadKind: "StatefulSet",
      name: "db",
      environment: "production",
    });
    const plain = (await service.api("GET", `/projects/${tieProject}/deployments`)).body.deployments[0];
    expect(plain.id).toBe(row.id);
    expect(plain).not.toHaveProperty("workload_kind");
    expect(plain).not.toHaveProperty("workload_name");
    const withWorkload = await service.api("GET", `/projects/${tieProject}/deployments?include=workload`);
    expect(withWorkload.body.deployments[0]).toEqual({
      ...plain,
      workload_kind: "StatefulSet",
      workload_name: "db",
    });
    const refused = await service.api("GET", `/projects/${tieProject}/deployments?include=pods`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("include must be workload");
    await service.pool.query("DELETE FROM deployments WHERE id = $1", [row.id]);
  });

  it("serves later pages and an empty page past the end with the real total", async () => {
    const third = await service.api("GET", path("?page=3"));
    expect(third.body.deployments.map((d: { id: number }) => d.id)).toEqual(expected.slice(20));
    const past = await service.api("GET", path("?page=4"));
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ deployments: [], total: count, page: 4, per_page: 10 });
  });

  it("accepts per_page 1 and 100", async () => {
    const one = await service.api("GET", path("?per_page=1&page=2"));
    expect(one.body.deployments.map((d: { id: number }) => d.id)).toEqual(expected.slice(1, 2));
    const hundred = await service.api("GET", path("?per_page=100"));
    expect(hundred.body.per_page).toBe(100);
    expect(hundred.body.deployments.map((d: { id: number }) => d.id)).toEqual(expected);
  });

  it.each(["0", "101", "-5", "2.5", "ten", ""])("rejects per_page=%j with 400", async (value) => {
    expectValidationError(await service.api("GET", path(`?per_page=${value}`)), "per_page");
  });

  it.each(["0", "-2", "0.5", "first", ""])("rejects page=%j with 400", async (value) => {
    expectValidationError(await service.api("GET", path(`?page=${value}`)), "page");
  });

  it("collects every deployment exactly once when a client walks the pages in order", async () => {
    const walk = await walkPages((page) => path(`?page=${page}&per_page=6`), "deployments", "per_page", 6);
    expect(walk.ids).toEqual(expected);
    expect(walk.pages).toBe(Math.ceil(count / 6));
  });

  it("keeps a stable order (id desc) under identical created_at", async () => {
    const ids = await createDeployments(tieProject, 17);
    await service.pool.query(
      "UPDATE deployments SET created_at = '2026-01-01T00:00:00Z' WHERE project_id = $1",
      [tieProject],
    );
    const descending = [...ids].sort((a, b) => b - a);
    for (const size of [1, 3, 5, 10]) {
      const walk = await walkPages(
        (page) => `/projects/${tieProject}/deployments?page=${page}&per_page=${size}`,
        "deployments",
        "per_page",
        size,
      );
      expect(walk.ids).toEqual(descending);
    }
  });

  it("answers 404 for an unknown project or one outside the key's scope, 400 for a bad id", async () => {
    expectNotFound(await service.api("GET", "/projects/999999/deployments"));
    const scoped = await service.api("POST", "/api-keys", {
      body: { name: "other-project", project_ids: [otherDeploymentProject] },
    });
    expectNotFound(await service.api("GET", path(), { key: scoped.body.key }));
    const own = await service.api("GET", `/projects/${otherDeploymentProject}/deployments`, {
      key: scoped.body.key,
    });
    expect(own.status).toBe(200);
    expect(own.body.total).toBe(5);
    const bad = await service.api("GET", "/projects/abc/deployments");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
  });
});

describe("GET /projects/{project_id}/webhooks (page_size family)", () => {
  const count = 23;
  let rows: Keyed[];
  let expected: number[];
  const path = (query = "") => `/projects/${webhookProject}/webhooks${query}`;
  const idsOf = (items: { id: number }[]) => items.map((item) => item.id);

  beforeAll(async () => {
    rows = await scrambleCreatedAt("webhooks", await createWebhooks(webhookProject, count));
    expected = newestFirst(rows);
    await scrambleCreatedAt("webhooks", await createWebhooks(deploymentProject, 4), 3600);
  });

  it("returns a bare array of every webhook, newest first, without page or page_size", async () => {
    const response = await service.api("GET", path());
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    expect(idsOf(response.body)).toEqual(expected);
    for (const webhook of response.body) {
      expect(Object.keys(webhook).sort()).toEqual([...webhookFields].sort());
      expect(webhook.project_id).toBe(webhookProject);
      expect(typeof webhook.has_secret).toBe("boolean");
      expect(typeof webhook.enabled).toBe("boolean");
      expect(webhook.created_at).toMatch(isoMillis);
      expect(webhook.updated_at).toMatch(isoMillis);
    }
    expect(response.text).not.toContain("secret-");
    // Other lists' parameters neither switch to the envelope nor go unread: a 400 names them.
    const other = await service.api("GET", path("?per_page=5&limit=3"));
    expect(other.status).toBe(400);
    expect(other.body.error.details.map((detail: { path: string }) => detail.path)).toEqual([
      "query.per_page",
      "query.limit",
    ]);
  });

  it("switches to the {data,total,page,page_size} envelope with page alone (page_size 20)", async () => {
    const response = await service.api("GET", path("?page=1"));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["data", "page", "page_size", "total"]);
    expect(response.body).toMatchObject({ total: count, page: 1, page_size: 20 });
    expect(idsOf(response.body.data)).toEqual(expected.slice(0, 20));
    const second = await service.api("GET", path("?page=2"));
    expect(second.body).toMatchObject({ total: count, page: 2, page_size: 20 });
    expect(idsOf(second.body.data)).toEqual(expected.slice(20));
  });

  it("switches to the envelope with page_size alone (page 1)", async () => {
    const response = await service.api("GET", path("?page_size=5"));
    expect(response.body).toMatchObject({ total: count, page: 1, page_size: 5 });
    expect(idsOf(response.body.data)).toEqual(expected.slice(0, 5));
  });

  it.each([
    ["0", 1],
    ["-5", 1],
    ["1", 1],
    ["100", 100],
    ["101", 100],
    ["500", 100],
  ])("clamps page_size=%s to %i instead of failing", async (value, clamped) => {
    const response = await service.api("GET", path(`?page_size=${value}`));
    expect(response.status).toBe(200);
    expect(response.body.page_size).toBe(clamped);
    expect(response.body.total).toBe(count);
    expect(idsOf(response.body.data)).toEqual(expected.slice(0, clamped));
  });

  it("pages with a clamped page_size use the clamped size for the offset", async () => {
    const response = await service.api("GET", path("?page_size=0&page=3"));
    expect(response.body).toMatchObject({ page: 3, page_size: 1 });
    expect(idsOf(response.body.data)).toEqual(expected.slice(2, 3));
  });

  it.each(["1.5", "abc", "", "NaN", "1e400"])("rejects non-integer page_size=%j with 400", async (value) => {
    expectValidationError(await service.api("GET", path(`?page_size=${value}`)), "page_size");
  });

  it.each(["0", "-1", "2.5", "abc", ""])("rejects page=%j with 400", async (value) => {
    expectValidationError(await service.api("GET", path(`?page=${value}&page_size=5`)), "page");
  });

  it("answers an empty page past the end with the real total", async () => {
    const response = await service.api("GET", path("?page=3"));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], total: count, page: 3, page_size: 20 });
    const far = await service.api("GET", path(`?page=${Number.MAX_SAFE_INTEGER}&page_size=100`));
    expect(far.status).toBe(200);
    expect(far.body.data).toEqual([]);
    expect(far.body.total).toBe(count);
  });

  it("collects every webhook exactly once when a client walks the pages in order", async () => {
    const walk = await walkPages((page) => path(`?page=${page}&page_size=4`), "data", "page_size", 4);
    expect(walk.ids).toEqual(expected);
    expect(walk.pages).toBe(Math.ceil(count / 4));
    // The pages concatenated equal the bare list.
    expect(walk.ids).toEqual(idsOf((await service.api("GET", path())).body));
  });

  it("keeps a stable order (id desc) under identical created_at", async () => {
    const ids = await createWebhooks(tieProject, 11);
    await service.pool.query(
      "UPDATE webhooks SET created_at = '2026-01-01T00:00:00Z' WHERE project_id = $1",
      [tieProject],
    );
    const descending = [...ids].sort((a, b) => b - a);
    expect(idsOf((await service.api("GET", `/projects/${tieProject}/webhooks`)).body)).toEqual(descending);
    for (const size of [1, 2, 3, 20]) {
      const walk = await walkPages(
        (page) => `/projects/${tieProject}/webhooks?page=${page}&page_size=${size}`,
        "data",
        "page_size",
        size,
      );
      expect(walk.ids).toEqual(descending);
    }
  });

  it("answers 404 for an unknown project, with or without pagination", async () => {
    expectNotFound(await service.api("GET", "/projects/999999/webhooks"));
    expectNotFound(await service.api("GET", "/projects/999999/webhooks?page=1"));
  });
});
