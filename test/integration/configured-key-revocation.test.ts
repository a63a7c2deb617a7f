import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startTestService } from "../support/service.js";

// Revoked means revoked: the configured admin key (API_KEY, registered at every start-up) came back
// with the next restart after being revoked through the API.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

it("keeps a configured API key that was revoked through the API revoked after a restart", async () => {
  const first = await startTestService({}, { database });
  let spareKey: string;
  try {
    const spare = await first.api("POST", "/api-keys", { body: { name: "spare admin" } });
    expect(spare.status).toBe(201);
    spareKey = spare.body.key;
    const keys = await first.api("GET", "/api-keys");
    const configured = keys.body.find((key: { name: string }) => key.name === "configured");
    expect((await first.api("DELETE", `/api-keys/${configured.id}`, { key: spareKey })).status).toBe(204);
    expect((await first.api("GET", "/projects")).status).toBe(401);
  } finally {
    await first.close();
  }
  // The same API_KEY configured again: still refused; the other keys are unaffected.
  const restarted = await startTestService({}, { database });
  try {
    expect((await restarted.api("GET", "/projects")).status).toBe(401);
    expect((await restarted.api("GET", "/projects", { key: spareKey })).status).toBe(200);
    const names = (await restarted.api("GET", "/api-keys", { key: spareKey })).body.map(
      (key: { name: string }) => key.name,
    );
    expect(names).toEqual(["spare admin"]);
  } finally {
    await restarted.close();
  }
});
