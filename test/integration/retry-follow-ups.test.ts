import { describe, expect, it } from "vitest";
import { type Pool, withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, queueDueRetries, recordAndClaim } from "../../src/delivery-engine/queue.js";
import type { ClaimPlan } from "../../src/delivery-engine/receiver-limits.js";
import { insertProject } from "../../src/projects/store.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import { onNewDatabase, workerConnectionsOf } from "../support/new-database.js";
import { testSecretBox } from "../support/secret-keys.js";

// The follow-up variants of the record-and-claim statement, driven directly (no worker): the same
// retry and auto-disable whichever claim they extend, the plain one or the capped one that a
// receiver limit selects (receiver-limits.ts).

const failed = {
  success: false,
  statusCode: 503,
  responseBody: "",
  errorMessage: "HTTP 503",
  failure: "http" as const,
  durationMs: 3,
  requestTimestamp: null,
  signature: null,
};

// The capped claim is taken when some limit is below the claim's: here the webhook's allowance of 1
// against a claim of 2, so each claim still takes one row.
const plans: [string, number, (webhookId: number) => ClaimPlan][] = [
  ["plain", 1, () => ({ allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 })],
  [
    "capped",
    2,
    (webhookId) => ({
      allowances: new Map([[webhookId, { allowance: 1, restricted: false }]]),
      defaultAllowance: 100,
      restrictedBudget: 100,
    }),
  ],
];

describe.each(plans)("with the %s claim", (name, limit, planFor) => {
  // A database of its own: the other claim must not take this one's rows.
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings);

  it("records the failure, schedules the retry, counts toward auto-disable and still claims", async () => {
    const project = await insertProject(pool, { name, slug: name, repoUrl: null });
    const webhook = await insertWebhook(pool, testSecretBox(), {
      projectId: project.id,
      url: "https://x.example",
      events: ["deployment.created"],
      enabled: true,
      secret: null,
      policies: { retryMaxAttempts: 2, autoDisable: { afterFailures: 5, minDurationSeconds: 0 } },
    });
    await withTransaction(pool, (client) =>
      emitEvents(client, [
        { eventType: "deployment.created", projectId: project.id, payload: {} },
        { eventType: "deployment.created", projectId: project.id, payload: {} },
      ]),
    );
    const claim = { limit, leaseMs: 60_000, plan: planFor(webhook.id) };
    const [first] = await recordAndClaim(workerConnectionsOf(pool), "worker", [], claim, autoDisablePolicy);
    expect(first).toMatchObject({
      attempt_number: 1,
      retry_max_attempts: 2,
      counted_by_policy: true,
      enabled: true,
    });
    const [second] = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker",
      [
        {
          id: first?.id ?? 0,
          outcome: failed,
          deliveredAtMs: Date.now(),
          retryInMs: 0,
          countedByPolicy: true,
        },
      ],
      claim,
      autoDisablePolicy,
    );
    expect(second?.id).not.toBe(first?.id);
    expect(second?.webhook_id).toBe(webhook.id);
    const recorded = await pool.query("SELECT state, success FROM deliveries WHERE id = $1", [first?.id]);
    expect(recorded.rows[0]).toEqual({ state: "done", success: false });
    const waiting = await pool.query("SELECT attempt_number FROM scheduled_retries WHERE webhook_id = $1", [
      webhook.id,
    ]);
    expect(waiting.rows).toEqual([{ attempt_number: 2 }]);
    const counted = await pool.query("SELECT consecutive_failures FROM webhooks WHERE id = $1", [webhook.id]);
    expect(counted.rows[0].consecutive_failures).toBe(1);

    expect(await queueDueRetries(pool, 10)).toBe(1);
    const queued = await pool.query(
      "SELECT attempt_number, state FROM deliveries WHERE webhook_id = $1 AND attempt_number = 2",
      [webhook.id],
    );
    expect(queued.rows).toEqual([{ attempt_number: 2, state: "queued" }]);
  });
});

describe("with nothing to claim (outcomes recorded on their own)", () => {
  let pool: Pool;
  onNewDatabase((created) => (pool = created), 2, claimSessionSettings);

  it("records, schedules the retry and counts the failure, and leaves queued rows queued", async () => {
    const project = await insertProject(pool, { name: "Alone", slug: "alone", repoUrl: null });
    const webhook = (policies?: {
      retryMaxAttempts: number;
      autoDisable: { afterFailures: number; minDurationSeconds: number };
    }) =>
      insertWebhook(pool, testSecretBox(), {
        projectId: project.id,
        url: "https://x.example",
        events: ["deployment.created"],
        enabled: true,
        secret: null,
        ...(policies ? { policies } : {}),
      });
    const withPolicy = await webhook({
      retryMaxAttempts: 2,
      autoDisable: { afterFailures: 5, minDurationSeconds: 0 },
    });
    const plain = await webhook();
    const emit = () =>
      withTransaction(pool, (client) =>
        emitEvents(client, [{ eventType: "deployment.created", projectId: project.id, payload: {} }]),
      );
    await emit();
    const plan = { allowances: new Map(), defaultAllowance: 100, restrictedBudget: 100 };
    const claimed = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker",
      [],
      { limit: 10, leaseMs: 60_000, plan },
      autoDisablePolicy,
    );
    const byWebhook = new Map(claimed.map((row) => [row.webhook_id, row.id]));
    await emit(); // queued while the first two are in flight
    const nothing = { limit: 0, leaseMs: 60_000, plan };
    const succeeded = { ...failed, success: true, statusCode: 200, errorMessage: null, failure: null };
    // The plain variant (no follow-ups), then the follow-up one.
    const plainId = byWebhook.get(plain.id) ?? 0;
    expect(
      await recordAndClaim(
        workerConnectionsOf(pool),
        "worker",
        [{ id: plainId, outcome: succeeded, deliveredAtMs: Date.now() }],
        nothing,
        autoDisablePolicy,
      ),
    ).toEqual([]);
    const policyId = byWebhook.get(withPolicy.id) ?? 0;
    const outcome = {
      id: policyId,
      outcome: failed,
      deliveredAtMs: Date.now(),
      retryInMs: 0,
      countedByPolicy: true,
    };
    expect(
      await recordAndClaim(workerConnectionsOf(pool), "worker", [outcome], nothing, autoDisablePolicy),
    ).toEqual([]);

    const { rows } = await pool.query("SELECT id, state, success FROM deliveries ORDER BY id");
    expect(rows).toEqual(
      expect.arrayContaining([
        { id: plainId, state: "done", success: true },
        { id: policyId, state: "done", success: false },
      ]),
    );
    expect(rows.filter((row) => row.state === "queued")).toHaveLength(2);
    const waiting = await pool.query("SELECT attempt_number FROM scheduled_retries WHERE webhook_id = $1", [
      withPolicy.id,
    ]);
    expect(waiting.rows).toEqual([{ attempt_number: 2 }]);
    const counted = await pool.query("SELECT consecutive_failures FROM webhooks WHERE id = $1", [
      withPolicy.id,
    ]);
    expect(counted.rows[0].consecutive_failures).toBe(1);
  });
});
