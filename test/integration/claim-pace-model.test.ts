import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvents } from "../../src/delivery-engine/emit.js";
import { claimSessionSettings, recordAndClaim } from "../../src/delivery-engine/queue.js";
import type { ClaimPlan } from "../../src/delivery-engine/receiver-limits.js";
import type { DeploymentEventType } from "../../src/event-types.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";
import { insertWebhook } from "../../src/webhooks/store.js";
import {
  onNewDatabase,
  paceRowsOf,
  resetToOneWebhook,
  workerConnectionsOf,
} from "../support/new-database.js";
import { testSecretBox } from "../support/secret-keys.js";

// The claim's pace rules (sql/claim.sql, `gates` and `pace_taken`) against a model, over random
// sequences of emits, claims and bucket levels on a real Postgres: three webhooks, one without a rate
// limit and two with one, each subscribed to an event type of its own. The model keeps each webhook's
// due rows and each limited one's tokens; after every claim, no webhook got more than its due rows, its
// allowance or its whole tokens, the claim no more than its limit; when the limit leaves every webhook
// its whole share, each got exactly what it could; a limited webhook's bucket lost exactly what it
// gave, and the pace row of one given nothing is as it was. The rate is 0.001 a second, so a run's
// refill (a few thousandths of a token) moves no bucket across a whole token.
// PACE_MODEL_RUNS sets the number of sequences (default 30).

let pool: Pool;
onNewDatabase((created) => (pool = created), 1, claimSessionSettings);

const eventTypes: DeploymentEventType[] = ["deployment.created", "deployment.failed", "deployment.succeeded"];
/** Which of the three webhooks have a rate limit, and their bursts. */
const bursts: Array<number | null> = [null, 5, 3];
const ratePerSecond = 0.001;

interface Model {
  projectId: number;
  webhookIds: number[];
  due: number[];
  /** Rows claimed and not finished (the claims' leases outlast a run): what the worker says it holds. */
  held: number[];
  tokens: Array<number | null>;
}

class Emit implements fc.AsyncCommand<Model, object> {
  constructor(
    readonly webhook: number,
    readonly count: number,
  ) {}
  check = () => true;
  async run(model: Model): Promise<void> {
    const eventType = eventTypes[this.webhook] as DeploymentEventType;
    await withTransaction(pool, (client) =>
      emitEvents(
        client,
        Array.from({ length: this.count }, () => ({ eventType, projectId: model.projectId, payload: {} })),
      ),
    );
    model.due[this.webhook] = (model.due[this.webhook] ?? 0) + this.count;
  }
  toString = () => `emit(${this.webhook}, ${this.count})`;
}

class SetTokens implements fc.AsyncCommand<Model, object> {
  constructor(
    readonly webhook: number,
    readonly tokens: number,
  ) {}
  check = (model: Readonly<Model>) => model.tokens[this.webhook] !== null;
  async run(model: Model): Promise<void> {
    await pool.query(
      "UPDATE webhook_pace SET tokens = $2, refilled_at = clock_timestamp() WHERE webhook_id = $1",
      [model.webhookIds[this.webhook], this.tokens],
    );
    model.tokens[this.webhook] = this.tokens;
  }
  toString = () => `setTokens(${this.webhook}, ${this.tokens})`;
}

class Claim implements fc.AsyncCommand<Model, object> {
  constructor(
    readonly limit: number,
    readonly allowances: number[],
  ) {}
  check = () => true;
  async run(model: Model): Promise<void> {
    const plan: ClaimPlan = {
      allowances: new Map(
        model.webhookIds.map((id, i) => [id, { allowance: this.allowances[i] ?? 0, restricted: false }]),
      ),
      defaultAllowance: 0,
      restrictedBudget: 16,
      held: new Map(model.webhookIds.map((id, i) => [id, model.held[i] ?? 0])),
    };
    const before = await paceRowsOf(pool);
    const rows = await recordAndClaim(
      workerConnectionsOf(pool),
      "worker-a",
      [],
      { limit: this.limit, leaseMs: 600_000, plan },
      autoDisablePolicy,
    );
    const after = await paceRowsOf(pool);
    const got = model.webhookIds.map((id) => rows.filter((row) => row.webhook_id === id).length);
    expect(rows.length).toBeLessThanOrEqual(this.limit);
    // What each webhook could get: its due rows, its allowance, its whole tokens.
    const could = model.webhookIds.map((_, i) => {
      const tokens = model.tokens[i] ?? null;
      const whole = tokens === null ? Number.POSITIVE_INFINITY : Math.floor(tokens);
      return Math.min(model.due[i] ?? 0, this.allowances[i] ?? 0, whole);
    });
    for (const [i, n] of got.entries()) expect(n, `webhook ${i}`).toBeLessThanOrEqual(could[i] ?? 0);
    // The claim's slots are shared evenly among the webhooks with unfinished rows that may get one
    // (claim.sql, `shares`): when each share covers what its webhook could get, it gets exactly that.
    const sharing = model.webhookIds.filter((_, i) => {
      const tokens = model.tokens[i] ?? null;
      const unfinished = (model.due[i] ?? 0) + (model.held[i] ?? 0);
      return unfinished > 0 && (this.allowances[i] ?? 0) > 0 && (tokens === null || tokens >= 1);
    }).length;
    if (sharing > 0 && Math.floor(this.limit / sharing) >= Math.max(...could)) expect(got).toEqual(could);
    for (const [i, id] of model.webhookIds.entries()) {
      const n = got[i] ?? 0;
      model.due[i] = (model.due[i] ?? 0) - n;
      model.held[i] = (model.held[i] ?? 0) + n;
      const tokens = model.tokens[i] ?? null;
      if (tokens === null) continue;
      if (n === 0) {
        expect(after.get(id), `webhook ${i}'s pace row, given nothing`).toEqual(before.get(id));
      } else {
        model.tokens[i] = tokens - n;
        expect(after.get(id)?.tokens).toBeCloseTo(tokens - n, 1);
      }
    }
  }
  toString = () => `claim(${this.limit}, [${this.allowances.join(", ")}])`;
}

const commands = [
  fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 6 })).map(([w, n]) => new Emit(w, n)),
  fc
    .tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 0, max: 12 }))
    // A bucket never holds more than its burst (the claim reads it so).
    .map(([w, halves]) => new SetTokens(w, Math.min(halves / 2, bursts[w] ?? 0))),
  fc
    .tuple(
      fc.integer({ min: 1, max: 12 }),
      fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 3, maxLength: 3 }),
    )
    .map(([limit, allowances]) => new Claim(limit, allowances)),
];

describe("the claim's pace, against a model", () => {
  it("never gives a webhook more than its due rows, allowance or tokens, and takes from the buckets exactly what it gave", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 14 }), async (sequence) => {
        const { projectId, webhookId } = await resetToOneWebhook(pool);
        const webhookIds = [webhookId];
        for (const [i, eventType] of eventTypes.entries()) {
          if (i === 0) continue;
          const webhook = await insertWebhook(pool, testSecretBox(), {
            projectId,
            url: `https://receiver.example/${i}`,
            events: [eventType],
            enabled: true,
            secret: null,
          });
          webhookIds.push(webhook.id);
        }
        await pool.query("UPDATE webhooks SET events = $2 WHERE id = $1", [webhookId, [eventTypes[0]]]);
        for (const [i, burst] of bursts.entries()) {
          if (burst === null) continue;
          await pool.query(
            "UPDATE webhooks SET rate_limit_per_second = $2, rate_limit_burst = $3 WHERE id = $1",
            [webhookIds[i], ratePerSecond, burst],
          );
          await pool.query(
            "INSERT INTO webhook_pace (webhook_id, tokens, refilled_at) VALUES ($1, $2, clock_timestamp())",
            [webhookIds[i], burst],
          );
        }
        const model: Model = { projectId, webhookIds, due: [0, 0, 0], held: [0, 0, 0], tokens: [...bursts] };
        await fc.asyncModelRun(() => ({ model, real: {} }), sequence);
      }),
      { numRuns: Number(process.env.PACE_MODEL_RUNS ?? 30) },
    );
  }, 300_000);
});
