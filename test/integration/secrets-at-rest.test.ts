import { createHmac, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { createProject } from "../support/api-fixtures.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { dumpDatabase } from "../support/database-dump.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { testSecretKey } from "../support/secret-keys.js";
import { startTestService, type TestService } from "../support/service.js";

// Webhook signing secrets are encrypted at rest: a copy of the database alone does not let anyone
// forge a signature, while deliveries keep their exact signatures.

let database: TestDatabase;
let receiver: Receiver;
const newKey = randomBytes(32).toString("base64");

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await database.drop();
});

async function withService<T>(env: Record<string, string>, use: (service: TestService) => Promise<T>) {
  const service = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "100", ...env }, { database });
  try {
    return await use(service);
  } finally {
    await service.close();
  }
}

/** Emits an event for the project and returns the request its webhook received, signature checked. */
async function deliverAndVerify(service: TestService, projectId: number, secret: string) {
  const before = receiver.requests.length;
  await withTransaction(service.pool, (client) =>
    emitEvent(client, { eventType: "deployment.succeeded", projectId, payload: { deployment_id: before } }),
  );
  const [request] = (await receiver.waitFor(before + 1)).slice(before);
  const timestamp = String(request?.headers["x-webhook-timestamp"]);
  const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.${request?.body}`).digest("hex")}`;
  expect(request?.headers["x-webhook-signature"]).toBe(expected);
}

describe("webhook secrets at rest", () => {
  const secrets = ["whsec_first_0123456789abcdef", "whsec_second_fedcba9876543210", "whsec_third_changed"];
  let projectId: number;

  it("a dump of the database holds the webhooks but none of their secrets", async () => {
    await withService({}, async (service) => {
      projectId = await createProject(service, "sealed", "Sealed");
      const created = [];
      for (const secret of secrets.slice(0, 2)) {
        const response = await service.api("POST", `/projects/${projectId}/webhooks`, {
          body: { url: `${receiver.url}/sealed`, events: ["deployment.succeeded"], secret },
        });
        expect(response.status).toBe(201);
        expect(response.body.has_secret).toBe(true);
        created.push(response.body.id);
      }
      const updated = await service.api("PUT", `/projects/${projectId}/webhooks/${created[1]}`, {
        body: { secret: secrets[2] },
      });
      expect(updated.status).toBe(200);

      const dump = await dumpDatabase(database.url);
      expect(dump.text).toContain(`${receiver.url}/sealed`); // the dump does hold the webhooks
      for (const secret of secrets) expect(dump.text, `${dump.tool} shows ${secret}`).not.toContain(secret);
      expect(dump.text).not.toContain(testSecretKey);
      expect(dump.text).toMatch(/wo1\.[0-9a-f]{16}\./);

      await service.api("DELETE", `/projects/${projectId}/webhooks/${created[1]}`);
      await deliverAndVerify(service, projectId, secrets[0] as string);
    });
  });

  it("seals clear-text secrets left by an earlier version at start-up; signatures stay the same", async () => {
    const legacySecret = "whsec_written_before_encryption";
    await withService({}, async (service) => {
      await service.pool.query(
        "UPDATE webhooks SET secret = $1, secret_encrypted = false WHERE project_id = $2",
        [legacySecret, projectId],
      );
    });
    await withService({}, async (service) => {
      const { rows } = await service.pool.query("SELECT secret, secret_encrypted FROM webhooks");
      expect(rows).toEqual([{ secret: expect.stringMatching(/^wo1\./), secret_encrypted: true }]);
      expect(JSON.stringify(rows)).not.toContain(legacySecret);
      await deliverAndVerify(service, projectId, legacySecret);
    });
  });

  it("rotates: a new key first decrypts old rows, `secrets reencrypt` moves them to it, the old key can go", async () => {
    assertBuilt();
    const stored = async (service: TestService) =>
      (await service.pool.query<{ secret: string }>("SELECT secret FROM webhooks")).rows[0]?.secret ?? "";
    const rotated = `${newKey},${testSecretKey}`;
    const before = await withService({ SECRET_ENCRYPTION_KEYS: rotated }, stored);
    const result = await runCli(
      { baseUrl: "http://127.0.0.1:9", apiKey: "unused" },
      ["secrets", "reencrypt"],
      {
        env: { DATABASE_URL: database.url, SECRET_ENCRYPTION_KEYS: rotated },
      },
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^re-encrypted 1 webhook secret\(s\) with key [0-9a-f]{16}\n$/);
    expect(result.code).toBe(0);
    await withService({ SECRET_ENCRYPTION_KEYS: newKey }, async (service) => {
      expect(await stored(service)).not.toBe(before);
      await deliverAndVerify(service, projectId, "whsec_written_before_encryption");
    });
  });

  it("a replica without the key says so in the delivery and sends nothing unsigned", async () => {
    await withService({ SECRET_ENCRYPTION_KEYS: randomBytes(32).toString("base64") }, async (service) => {
      const [webhook] = (await service.api("GET", `/projects/${projectId}/webhooks`)).body;
      const sent = receiver.requests.length;
      const test = await service.api("POST", `/projects/${projectId}/webhooks/${webhook.id}/test`, {
        body: {},
      });
      expect(test.status).toBe(200);
      expect(test.body.success).toBe(false);
      expect(test.body.error_message).toMatch(
        /webhook secret cannot be decrypted.*not among the configured keys/,
      );
      expect(test.body.error_message).not.toContain("whsec_");
      expect(receiver.requests.length).toBe(sent);
    });
  });

  it("refuses keys that are not base64 of 32 bytes, naming the setting", async () => {
    await expect(startTestService({ SECRET_ENCRYPTION_KEYS: "c2hvcnQ=" }, { database })).rejects.toThrow(
      "SECRET_ENCRYPTION_KEYS: key 1 is not base64 of 32 bytes (generate one with: openssl rand -base64 32)",
    );
  });
});
