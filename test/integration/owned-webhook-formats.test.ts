import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { ensureNamespaceProject } from "../../src/projects/store.js";
import { upsertOwnedWebhook } from "../../src/webhooks/owned-store.js";
import { toWebhookJson } from "../../src/webhooks/presenter.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { testSecretBox } from "../support/secret-keys.js";

// A Webhook resource's format fields reach the same columns as the API's, headers sealed like the
// secret; a reconcile that changes nothing writes nothing, and one that changes a header's value does.

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

it("stores, compares and updates the format fields of an operator-owned webhook", async () => {
  const secrets = testSecretBox();
  const project = await ensureNamespaceProject(pool, { name: "shop", displayName: null, repoUrl: null });
  const base = {
    projectId: project.id,
    url: "https://receiver.example/events",
    events: ["deployment.succeeded"],
    enabled: true,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    owner: "shop/events",
    generation: 1,
    format: "cloudevents" as const,
    cloudevents_mode: "binary" as const,
    template: null,
    template_content_type: "application/json",
    signature_scheme: "standard-webhooks" as const,
    headers: { Authorization: "Bearer token-one", "X-Team": "shop" },
  };
  const created = await upsertOwnedWebhook(pool, secrets, base);
  expect(created).toMatchObject({
    format: "cloudevents",
    cloudevents_mode: "binary",
    signature_scheme: "standard-webhooks",
    header_names: ["Authorization", "X-Team"],
  });
  const stored = await pool.query<{ headers: string }>("SELECT headers FROM webhooks WHERE id = $1", [
    created.id,
  ]);
  const sealedHeaders = stored.rows[0]?.headers as string;
  expect(sealedHeaders).not.toContain("token-one");
  expect(JSON.parse(secrets.open(sealedHeaders))).toEqual(base.headers);
  expect(JSON.stringify(toWebhookJson(created))).not.toContain("token-one");

  // The same spec again (headers in another order): nothing written.
  const again = await upsertOwnedWebhook(pool, secrets, {
    ...base,
    headers: { "X-Team": "shop", Authorization: "Bearer token-one" },
  });
  expect(again.updated_at).toEqual(created.updated_at);

  // A header's Secret changed, same generation: the new value is stored.
  const rotated = await upsertOwnedWebhook(pool, secrets, {
    ...base,
    headers: { Authorization: "Bearer token-two", "X-Team": "shop" },
  });
  expect(rotated.updated_at.getTime()).toBeGreaterThan(created.updated_at.getTime());
  expect(JSON.parse(secrets.open(rotated.headers as string)).Authorization).toBe("Bearer token-two");

  // A new spec: a template, no headers; the format fields follow.
  const template = '{"text": "{{ event.event_type }}"}';
  const templated = await upsertOwnedWebhook(pool, secrets, {
    ...base,
    generation: 2,
    format: "template",
    template,
    template_content_type: "text/plain",
    signature_scheme: "hmac-sha256",
    headers: null,
  });
  expect(templated).toMatchObject({
    format: "template",
    template,
    template_content_type: "text/plain",
    signature_scheme: "hmac-sha256",
    headers: null,
    header_names: [],
  });
  expect(templated.id).toBe(created.id);
  expect(templated.rollout_details).toBe(false);

  // spec.rolloutDetails: stored, compared (the same spec again writes nothing) and turned off again.
  const detailed = await upsertOwnedWebhook(pool, secrets, { ...base, generation: 3, rollout_details: true });
  expect(detailed.rollout_details).toBe(true);
  expect(toWebhookJson(detailed).rollout_details).toBe(true);
  const same = await upsertOwnedWebhook(pool, secrets, { ...base, generation: 3, rollout_details: true });
  expect(same.updated_at).toEqual(detailed.updated_at);
  const plain = await upsertOwnedWebhook(pool, secrets, { ...base, generation: 4 });
  expect(plain.rollout_details).toBe(false);
});
