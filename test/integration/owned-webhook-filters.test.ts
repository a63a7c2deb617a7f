import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { ensureNamespaceProject } from "../../src/projects/store.js";
import { upsertOwnedWebhook } from "../../src/webhooks/owned-store.js";
import { toWebhookJson } from "../../src/webhooks/presenter.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { testSecretBox } from "../support/secret-keys.js";

// A Webhook resource's filters reach the column the API writes; a reconcile with the same filters
// (in any order of keys) writes nothing, one that changes or removes them does.

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

it("stores, compares, changes and removes the filters of an operator-owned webhook", async () => {
  const secrets = testSecretBox();
  const project = await ensureNamespaceProject(pool, { name: "shop", displayName: null, repoUrl: null });
  const filters = {
    label_selector: { match_labels: { team: "payments", app: "web" } },
    environments: ["production"],
  };
  const base = {
    projectId: project.id,
    url: "https://receiver.example/events",
    events: ["deployment.succeeded"],
    enabled: true,
    secret: null,
    owner: "shop/filtered",
    generation: 1,
    filters,
  };
  const created = await upsertOwnedWebhook(pool, secrets, base);
  expect(toWebhookJson(created).filters).toEqual({
    label_selector: { match_labels: { app: "web", team: "payments" } },
    environments: ["production"],
  });

  const again = await upsertOwnedWebhook(pool, secrets, {
    ...base,
    filters: {
      environments: ["production"],
      label_selector: { match_labels: { app: "web", team: "payments" } },
    },
  });
  expect(again.updated_at).toEqual(created.updated_at);

  const changed = await upsertOwnedWebhook(pool, secrets, {
    ...base,
    generation: 2,
    filters: { kinds: ["StatefulSet"] },
  });
  expect(changed.filters).toEqual({ kinds: ["StatefulSet"] });
  expect(changed.updated_at.getTime()).toBeGreaterThan(created.updated_at.getTime());

  const removed = await upsertOwnedWebhook(pool, secrets, { ...base, generation: 3, filters: null });
  expect(removed.filters).toBeNull();
  expect(toWebhookJson(removed)).not.toHaveProperty("filters");
});
