import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { insertProject, listProjects } from "../../src/projects/store.js";
import { listWebhooksPage } from "../../src/webhooks/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// A page and its `total` come from one snapshot: while rows are being added, every answer is
// self-consistent (a short page is the last one, and total counts exactly what it ends with).

let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 6);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

it("a page past the end is empty and carries the real total", async () => {
  const project = await insertProject(pool, { name: "P", slug: "p", repoUrl: null });
  await pool.query(
    "INSERT INTO webhooks (project_id, url, events, enabled) SELECT $1, 'https://x.example', '{deployment.created}', true FROM generate_series(1, 3)",
    [project.id],
  );
  expect(await listWebhooksPage(pool, project.id, { page: 1, size: 2 })).toMatchObject({ total: 3 });
  expect(await listWebhooksPage(pool, project.id, { page: 9, size: 2 })).toEqual({ rows: [], total: 3 });
});

it("page and total agree while rows are inserted concurrently", async () => {
  let inserting = true;
  const writer = (async () => {
    for (let i = 0; inserting && i < 2_000; i++)
      await insertProject(pool, { name: `n${i}`, slug: `slug-${i}`, repoUrl: null });
  })();
  const size = 7;
  let checked = 0;
  for (let i = 0; i < 300; i++) {
    const page = 1 + (i % 3);
    const { rows, total } = await listProjects(pool, { page, size }, null);
    const before = (page - 1) * size;
    // A short page is the last: total is exactly what precedes it plus what it holds. A full page can
    // be followed by more, never by fewer. An empty page lies past the end: total is below its start.
    const agrees =
      rows.length === size
        ? total >= before + size
        : rows.length > 0
          ? total === before + rows.length
          : total <= before;
    expect({ page, rows: rows.length, total, agrees }).toEqual({
      page,
      rows: rows.length,
      total,
      agrees: true,
    });
    checked += 1;
  }
  inserting = false;
  await writer;
  expect(checked).toBe(300);
});
