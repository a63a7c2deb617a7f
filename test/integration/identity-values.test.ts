import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { lockRollout } from "../../src/deployments/store.js";
import { ensureNamespaceProject } from "../../src/projects/store.js";
import { upsertOwnedWebhook } from "../../src/webhooks/owned-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { testSecretBox } from "../support/secret-keys.js";

// Ids are shown to users: the operator's idempotent writes, which run on every reconcile and every
// Deployment status change, must not draw identity values when the row already exists.

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

const namespace = (displayName: string | null) => ({ name: "shop", displayName, repoUrl: null });

it("reconciling the same project, webhook and rollout again and again uses one id each", async () => {
  const first = await ensureNamespaceProject(pool, namespace(null));
  for (const displayName of [null, "Shop", "Shop", null])
    expect((await ensureNamespaceProject(pool, namespace(displayName))).id).toBe(first.id);
  const other = await ensureNamespaceProject(pool, { name: "billing", displayName: null, repoUrl: null });
  expect(other.id).toBe(first.id + 1);

  const webhook = (url: string, owner: string) => ({
    projectId: other.id,
    url,
    events: ["deployment.created"],
    enabled: true,
    secret: null,
    owner,
  });
  const created = await upsertOwnedWebhook(pool, testSecretBox(), webhook("https://a.example/1", "shop/a"));
  for (const url of ["https://a.example/1", "https://a.example/2", "https://a.example/2"])
    expect((await upsertOwnedWebhook(pool, testSecretBox(), webhook(url, "shop/a"))).id).toBe(created.id);
  expect((await upsertOwnedWebhook(pool, testSecretBox(), webhook("https://b.example", "shop/b"))).id).toBe(
    created.id + 1,
  );

  const rollout = (revision: string) => ({
    projectId: other.id,
    sourceUid: "uid-1",
    revision,
    name: "web",
    environment: "production",
  });
  const inTransaction = (revision: string) =>
    pool.connect().then(async (client) => {
      try {
        await client.query("BEGIN");
        const locked = await lockRollout(client, rollout(revision));
        await client.query("COMMIT");
        return locked;
      } finally {
        client.release();
      }
    });
  const one = await inTransaction("1");
  expect(one.inserted).toBe(true);
  for (let i = 0; i < 3; i++)
    expect(await inTransaction("1")).toMatchObject({ inserted: false, row: { id: one.row.id } });
  expect((await inTransaction("2")).row.id).toBe(one.row.id + 1);
});
