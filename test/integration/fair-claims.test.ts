import { beforeEach, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/queue.js";
import type { ClaimPlan } from "../../src/delivery-engine/receiver-limits.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import {
  onNewDatabase,
  paceRowsOf,
  resetToOneWebhook,
  workerConnectionsOf,
} from "../support/new-database.js";
import { testSecretBox } from "../support/secret-keys.js";

// The claim hands slots out round-robin across the webhooks with due rows, the one holding the fewest
// first (claim.ts): which rows are oldest decides nothing between webhooks. Before, a claim took the
// oldest rows, so a backlog of webhooks whose receivers hang filled every claim's window and a webhook
// the worker did not know yet (new, or any webhook after a restart) got nothing while they held it.

let pool: Pool;
onNewDatabase((created) => (pool = created), 1, claimSessionSettings);

let projectId: number;
let first: number;

async function addWebhook(event: "deployment.created" | "deployment.failed"): Promise<number> {
  const webhook = await insertWebhook(pool, testSecretBox(), {
    projectId,
    url: "https://receiver.example/other",
    events: [event],
    enabled: true,
    secret: null,
  });
  return webhook.id;
}

async function emit(count: number, eventType: "deployment.created" | "deployment.failed"): Promise<void> {
  await withTransaction(pool, (client) =>
    emitEvents(
      client,
      Array.from({ length: count }, () => ({ eventType, projectId, payload: {} })),
    ),
  );
}

const nobodyKnown: ClaimPlan = { allowances: new Map(), defaultAllowance: 2, restrictedBudget: 16 };

async function claim(limit: number, plan: ClaimPlan = nobodyKnown) {
  const rows = await recordAndClaim(
    workerConnectionsOf(pool),
    "worker-a",
    [],
    { limit, leaseMs: 60_000, plan },
    autoDisablePolicy,
  );
  const perWebhook = new Map<number, number>();
  for (const row of rows) perWebhook.set(row.webhook_id, (perWebhook.get(row.webhook_id) ?? 0) + 1);
  return { rows, perWebhook };
}

beforeEach(async () => {
  ({ projectId, webhookId: first } = await resetToOneWebhook(pool));
});

describe("a claim", () => {
  it("gives a webhook whose rows are the youngest its turn in the same claim as the oldest backlog", async () => {
    const hanging: number[] = [first];
    for (let i = 0; i < 9; i++) hanging.push(await addWebhook("deployment.created"));
    await emit(300, "deployment.created"); // 3,000 rows, the oldest, for the ten
    const young = await addWebhook("deployment.failed");
    await emit(5, "deployment.failed");
    // Nobody known (a restart): each of the eleven may get two; the first round of 16 slots gives each
    // one, the second the five oldest another.
    const { perWebhook } = await claim(16);
    expect(perWebhook.get(young)).toBe(1);
    expect(hanging.map((id) => perWebhook.get(id))).toEqual([2, 2, 2, 2, 2, 1, 1, 1, 1, 1]);
  });

  it("splits a claim evenly, the row left over going to the webhook holding fewer", async () => {
    const other = await addWebhook("deployment.failed");
    await emit(100, "deployment.created");
    await emit(100, "deployment.failed");
    const plan = (heldByFirst: number): ClaimPlan => ({
      allowances: new Map([
        [first, { allowance: 50, restricted: false }],
        [other, { allowance: 50, restricted: false }],
      ]),
      held: new Map([[first, heldByFirst]]),
      defaultAllowance: 2,
      restrictedBudget: 16,
    });
    // `first` holds 10 already: the odd row goes to `other`, although `first`'s rows are older.
    expect(Object.fromEntries((await claim(21, plan(10))).perWebhook)).toEqual({ [first]: 10, [other]: 11 });
    // One free slot goes to the webhook holding fewer.
    expect(Object.fromEntries((await claim(1, plan(11))).perWebhook)).toEqual({ [other]: 1 });
  });

  it("keeps restricted webhooks within the restricted budget and never past a webhook's allowance", async () => {
    const other = await addWebhook("deployment.failed");
    const unknown = await addWebhook("deployment.failed");
    await emit(100, "deployment.created");
    await emit(100, "deployment.failed");
    const plan: ClaimPlan = {
      allowances: new Map([
        [first, { allowance: 40, restricted: true }],
        [other, { allowance: 7, restricted: false }],
      ]),
      defaultAllowance: 2,
      restrictedBudget: 3,
    };
    const { perWebhook, rows } = await claim(64, plan);
    expect(Object.fromEntries(perWebhook)).toEqual({ [first]: 3, [other]: 7, [unknown]: 2 });
    // Left behind by limits, not by a share of the claim: nothing says to claim again at once.
    expect(rows.some((row) => row.more_due)).toBe(false);
    // With the budget spent, a restricted webhook gets nothing and the others still get their turn.
    const spent = await claim(64, { ...plan, restrictedBudget: 0, allowances: new Map(plan.allowances) });
    expect(spent.perWebhook.get(first)).toBeUndefined();
  });

  it("with more webhooks than slots, gives each one row and says that shares left rows behind", async () => {
    for (let i = 0; i < 99; i++) await addWebhook("deployment.created");
    await emit(50, "deployment.created"); // 100 webhooks × 50 rows
    const { rows, perWebhook } = await claim(64, {
      allowances: new Map(),
      defaultAllowance: 128,
      restrictedBudget: 64,
    });
    // An equal share is under one row: each webhook's share is at least one, and at most 64 go.
    expect(rows).toHaveLength(64);
    expect(Math.max(...perWebhook.values())).toBe(1);
    expect(rows.every((row) => row.more_due)).toBe(true);
  });
});

describe("a claim of rate-limited webhooks", () => {
  it("takes tokens only from the buckets of webhooks it gave rows to, and leaves the others' pace rows as they were", async () => {
    const other = await addWebhook("deployment.created");
    await pool.query(
      "UPDATE webhooks SET rate_limit_per_second = 1, rate_limit_burst = 5 WHERE id = ANY ($1::bigint[])",
      [[first, other]],
    );
    await emit(10, "deployment.created");
    // The first claim finds no pace rows (written by an older replica's limit): it makes full ones.
    expect((await claim(1)).rows).toHaveLength(0);
    const full = await paceRowsOf(pool);
    expect([...full.values()].map((row) => row.tokens)).toEqual([5, 5]);
    // Three rows for `first` (its allowance), none for `other` (known, with no allowance left).
    const plan: ClaimPlan = {
      allowances: new Map([
        [first, { allowance: 3, restricted: false }],
        [other, { allowance: 0, restricted: false }],
      ]),
      defaultAllowance: 2,
      restrictedBudget: 16,
    };
    const { perWebhook } = await claim(10, plan);
    expect(Object.fromEntries(perWebhook)).toEqual({ [first]: 3 });
    const after = await paceRowsOf(pool);
    // The bucket was full (the burst: refilling adds nothing), less the three taken.
    expect(after.get(first)?.tokens).toBe(2);
    expect(after.get(other)).toEqual(full.get(other));
  });
});
