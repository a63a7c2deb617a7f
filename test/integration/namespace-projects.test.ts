import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import {
  applyNamespaceSelection,
  ensureNamespaceProject,
  findProject,
  insertProject,
  listProjectNamespaces,
  listProjects,
  withdrawNamespaceProject,
} from "../../src/projects/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

// The project rows of namespaces as the operator writes them: annotations or their defaults, and
// withdrawn (hidden, kept) while the selector does not match the namespace.

let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 2);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

const visible = async () => ({
  listed: (await listProjects(pool, { page: 1, size: 100 }, null)).rows.map((p) => p.slug).sort(),
  namespaces: (await listProjectNamespaces(pool)).map((p) => p.slug).sort(),
});

it("takes name and repo_url from the annotations, and their defaults once they are removed", async () => {
  const annotated = await ensureNamespaceProject(pool, {
    name: "billing",
    displayName: "Billing",
    repoUrl: "https://git.example.com/billing",
  });
  expect(annotated).toMatchObject({ name: "Billing", repo_url: "https://git.example.com/billing" });
  const plain = await ensureNamespaceProject(pool, { name: "billing", displayName: null, repoUrl: null });
  expect(plain).toMatchObject({ id: annotated.id, name: "billing", repo_url: null });
});

it("withdraws and restores projects of namespaces, keeping their ids, and never touches API projects", async () => {
  const shop = await ensureNamespaceProject(pool, { name: "shop", displayName: null, repoUrl: null });
  const media = await ensureNamespaceProject(pool, { name: "media", displayName: null, repoUrl: null });
  await insertProject(pool, { name: "By hand", slug: "by-hand", repoUrl: null });

  expect(await withdrawNamespaceProject(pool, "shop")).toBe(true);
  expect(await withdrawNamespaceProject(pool, "shop")).toBe(false);
  expect(await withdrawNamespaceProject(pool, "by-hand")).toBe(false);
  expect(await findProject(pool, shop.id)).toBeUndefined();
  expect(await visible()).toEqual({
    listed: ["billing", "by-hand", "media"],
    namespaces: ["billing", "by-hand", "media"],
  });

  // After a complete list where only billing and shop match: media goes, shop comes back.
  expect(await applyNamespaceSelection(pool, ["billing", "shop"])).toEqual({
    withdrawn: ["media"],
    restored: ["shop"],
  });
  expect(await applyNamespaceSelection(pool, ["billing", "shop"])).toEqual({ withdrawn: [], restored: [] });
  expect((await visible()).listed).toEqual(["billing", "by-hand", "shop"]);
  expect(await findProject(pool, shop.id)).toMatchObject({ slug: "shop" });

  // A selected namespace seen again brings its project back, same id.
  const again = await ensureNamespaceProject(pool, { name: "media", displayName: null, repoUrl: null });
  expect((await visible()).listed).toEqual(["billing", "by-hand", "media", "shop"]);
  expect(again.id).toBe(media.id);
});
