import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// API keys a replica verified are remembered for API_KEY_CACHE_TTL_MS: a burst with one key costs one
// query, not one per request, and a revoked key stops working at once where it was revoked and within
// the TTL on the other replicas.

let database: TestDatabase;
let first: TestService;
let second: TestService;

beforeAll(async () => {
  database = await createTestDatabase();
  // Two replicas of one database; no workers, so the pool serves only the requests counted.
  first = await startTestService({ DELIVERY_WORKERS: "false" }, { database });
  second = await startTestService({ DELIVERY_WORKERS: "false", API_KEY_CACHE_TTL_MS: "1000" }, { database });
});
afterAll(async () => {
  await second?.close();
  await first?.close();
  await database?.drop();
});

async function newKey(): Promise<{ id: number; key: string }> {
  const response = await first.api("POST", "/api-keys", { body: { name: "cached" } });
  expect(response.status).toBe(201);
  return response.body;
}

const statusWith = async (replica: TestService, key: string) =>
  (await replica.api("GET", "/service-info", { key })).status;

describe("verified API keys", () => {
  it("answers 50 concurrent requests with one key from one query (each took a query and a connection)", async () => {
    const { key } = await newKey();
    let acquired = 0;
    const count = () => {
      acquired += 1;
    };
    first.pool.on("acquire", count);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => statusWith(first, key)));
    first.pool.off("acquire", count);
    expect(new Set(statuses)).toEqual(new Set([200]));
    // The lookup, and the write of last_used_at.
    expect(acquired).toBeLessThanOrEqual(2);
  });

  it("stops accepting a revoked key at once on the replica that revoked it", async () => {
    const { id, key } = await newKey();
    expect(await statusWith(first, key)).toBe(200);
    expect((await first.api("DELETE", `/api-keys/${id}`)).status).toBe(204);
    expect(await statusWith(first, key)).toBe(401);
  });

  it("stops accepting it on another replica within API_KEY_CACHE_TTL_MS", async () => {
    const { id, key } = await newKey();
    expect(await statusWith(second, key)).toBe(200);
    expect((await first.api("DELETE", `/api-keys/${id}`)).status).toBe(204);
    await waitUntil(
      "the other replica to refuse the revoked key",
      async (saw) => {
        const status = await statusWith(second, key);
        saw(status);
        return status === 401 ? true : undefined;
      },
      // Its memory of the key ends with the TTL (1 s here), not at its next restart.
      { timeoutMs: 10_000 },
    );
  });
});
