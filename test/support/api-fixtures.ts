import { expect } from "vitest";
import type { Webhook } from "../../src/client/api-client.js";
import { type Pool, withTransaction } from "../../src/db/pool.js";
import { type EmittedEvent, emitEvent, emitEvents } from "../../src/delivery-engine/emit.js";
import type { DeploymentEventType } from "../../src/event-types.js";
import type { TestService } from "./service.js";

// What many tests need before their own steps: a project and webhooks made through the API, events
// written to the outbox as a rollout writes them, and a webhook's delivery records read back through
// the API. Each fails the test at once when the service refuses (so a later assertion cannot fail for
// a reason it does not name).

/** A project made through the API with the admin key (POST /projects); its id. */
export async function createProject(service: TestService, slug: string, name = slug): Promise<number> {
  const created = await service.api("POST", "/projects", { body: { name, slug } });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** A webhook of the project made through the API; its JSON as the API answered it. */
export async function createWebhook(
  service: TestService,
  projectId: number,
  body: Record<string, unknown>,
): Promise<Webhook> {
  const created = await service.api("POST", `/projects/${projectId}/webhooks`, { body });
  expect(created.status).toBe(201);
  return created.body;
}

/** One event of the project in the outbox, in a transaction of its own, as a rollout records it. */
export function emit(
  pool: Pool,
  projectId: number,
  eventType: DeploymentEventType,
  payload: object = { deployment_id: 1 },
): Promise<EmittedEvent & { queued: number }> {
  return withTransaction(pool, (client) => emitEvent(client, { eventType, projectId, payload }));
}

/** `count` events of the project in the outbox, in one transaction. */
export async function emitMany(
  pool: Pool,
  projectId: number,
  eventType: DeploymentEventType,
  count: number,
): Promise<void> {
  await withTransaction(pool, (client) =>
    emitEvents(
      client,
      Array.from({ length: count }, () => ({ eventType, projectId, payload: {} })),
    ),
  );
}

/** A webhook's finished delivery records, newest first, through the API (`query`: e.g. "?limit=100"). */
export async function deliveriesOf(
  service: TestService,
  projectId: number,
  webhookId: number,
  query = "",
  // biome-ignore lint/suspicious/noExplicitAny: tests read the records' fields as the API sends them
): Promise<any[]> {
  const list = await service.api("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries${query}`);
  expect(list.status).toBe(200);
  return list.body;
}
