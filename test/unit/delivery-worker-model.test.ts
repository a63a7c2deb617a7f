import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { minPauseMs, pausesBeforeAttempts } from "../../src/delivery-engine/retry-after.js";
import type { DeliveryOutcome, OutboundDelivery } from "../../src/delivery-engine/sender.js";
import { DeliveryWorker } from "../../src/delivery-engine/worker.js";
import { createLogger } from "../../src/logger.js";
import { ModelWorkerQueue } from "../support/model-worker-queue.js";

// The delivery worker (worker.ts, send-slots.ts) against a model, with random sequences of what can
// happen to it: rows queued and handed over, sends answered late (200, 500, 410, 429 with Retry-After 0
// or 30, a timeout) or ending before they return (a disabled webhook's row, a sender that throws),
// webhooks disabled by hand or by auto-disable on a 410, retries falling due, claimed rows waiting past
// their limit, replays and test events taking slots, time passing, shutdown. After every step the slots
// it holds must be the sends still open; then everything is answered and the worker must be idle with
// every slot free, every row recorded once (or paused as the model predicts, or left to its lease), and
// nothing due left unclaimed. Each send is checked as it starts: of a row the worker holds, of a
// webhook enabled at the claim and not paused, never twice at once, and oldest claim first. The queue is ModelWorkerQueue (test/support), the clock fake.
//
// A failure prints a seed, a path and a replayPath. WORKER_MODEL_SEED=… alone runs the same runs again
// (and shrinks again); with WORKER_MODEL_PATH=… and WORKER_MODEL_REPLAY=… (the replayPath) it runs
// only the counterexample: npx vitest run test/unit/delivery-worker-model.test.ts. WORKER_MODEL_RUNS
// for more runs than 150.

const concurrency = 4;
const webhookIds = [1, 2, 3];
/** Webhook 2 retries a failed attempt once; webhook 3 has auto-disable (a 410 disables it). */
const retryMaxAttempts = new Map([[2, 2]]);
const autoDisable = [3];

type Answer = "200" | "500" | "410" | "429 now" | "429 30 s" | "timeout";

const outcomes: Record<Answer, DeliveryOutcome> = {
  "200": outcome(200, true),
  "500": outcome(500, false),
  "410": outcome(410, false),
  "429 now": { ...outcome(429, false), retryAfter: "0" },
  "429 30 s": { ...outcome(429, false), retryAfter: "30" },
  timeout: { ...outcome(0, false), failure: "timeout" },
};

function outcome(statusCode: number, success: boolean): DeliveryOutcome {
  return {
    success,
    statusCode,
    responseBody: "",
    errorMessage: success ? null : "failed",
    failure: success ? null : statusCode === 0 ? "timeout" : "http",
    durationMs: 1,
    requestTimestamp: 1,
    signature: null,
  };
}

/** What the model knows: the sends open, and what each answer should have made of its row. */
interface Model {
  running: boolean;
  /** Sends the worker started and the test has not answered, oldest first: delivery id → webhook. */
  open: Map<number, number>;
  synchronous: Array<{ webhookId: number; sendId: number }>;
  nextSendId: number;
  /** Rows whose sender threw: left claimed until their lease runs out. */
  thrown: number[];
  /** Per webhook: pauses granted in a row, and the end of the pause in force. */
  runs: Map<number, { run: number; pausedUntilMs: number }>;
  expectedPaused: number[];
  expectedRecorded: Set<number>;
}

interface Real {
  worker: DeliveryWorker;
  queue: ModelWorkerQueue;
  answers: Map<number, (outcome: DeliveryOutcome) => void>;
  /** Rows whose send throws before it returns. */
  throwing: Set<number>;
  /** What went wrong inside a send callback (checked after each step). */
  violations: string[];
}

async function settle() {
  for (let round = 0; round < 6; round += 1) await new Promise((resolve) => setImmediate(resolve));
}

async function advance(model: Model, real: Real, ms: number) {
  for (let left = ms; left > 0; left -= 1_000) {
    await vi.advanceTimersByTimeAsync(Math.min(1_000, left));
    await settle();
  }
  checkStep(model, real);
}

/** After every step: the worker holds a slot for exactly the sends still open, no more. */
function checkStep(model: Model, real: Real) {
  expect(real.violations.join("; ")).toBe("");
  const usage = real.worker.slotUsage;
  expect(usage.sending, "sends holding a slot, against the sends open").toBe(model.open.size);
  expect(usage.inUse).toBeLessThanOrEqual(concurrency + model.synchronous.length);
  expect(real.queue.recordedTwice).toEqual([]);
}

/** The model's side of an answer: whether the row is paused (back to the queue) or recorded. */
function predict(model: Model, id: number, webhookId: number, answer: Answer) {
  const now = Date.now();
  const state = model.runs.get(webhookId) ?? { run: 0, pausedUntilMs: 0 };
  model.runs.set(webhookId, state);
  if (answer.startsWith("429")) {
    const pausedNow = state.pausedUntilMs > now;
    if (state.run < pausesBeforeAttempts) {
      if (!pausedNow) state.run += 1;
      const asked = answer === "429 now" ? 0 : 30_000;
      state.pausedUntilMs = Math.max(state.pausedUntilMs, now + Math.max(minPauseMs, asked));
      model.expectedPaused.push(id);
      return;
    }
  } else state.run = 0;
  if (answer === "410" && autoDisable.includes(webhookId))
    state.pausedUntilMs = Math.max(state.pausedUntilMs, now + 1_000);
  model.expectedRecorded.add(id);
}

class QueueRows implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly webhookId: number,
    readonly count: number,
    readonly throwing: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    for (const row of real.queue.add(this.webhookId, this.count))
      if (this.throwing) real.throwing.add(row.id);
    real.queue.notify();
    await settle();
    checkStep(model, real);
  }
  toString = () =>
    `queue ${this.count} of webhook ${this.webhookId}${this.throwing ? " (sender throws)" : ""}`;
}

class HandOver implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly webhookId: number,
    readonly count: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const lease = real.worker.handOverLease();
    if (lease === undefined) return;
    const allowance = lease.allowances.get(this.webhookId) ?? lease.defaultAllowance;
    const count = Math.min(this.count, lease.limit, allowance);
    real.worker.takeHandedOver(real.queue.handOver(this.webhookId, count));
    await settle();
    checkStep(model, real);
  }
  toString = () => `hand over ${this.count} of webhook ${this.webhookId}`;
}

class AnswerSend implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly answer: Answer,
  ) {}
  check = (model: Readonly<Model>) => model.open.size > 0;
  async run(model: Model, real: Real) {
    const [id, webhookId] = [...model.open][this.pick % model.open.size] as [number, number];
    model.open.delete(id);
    predict(model, id, webhookId, this.answer);
    real.answers.get(id)?.(outcomes[this.answer]);
    await settle();
    checkStep(model, real);
  }
  toString = () => `answer send #${this.pick} with ${this.answer}`;
}

class SetEnabled implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly webhookId: number,
    readonly enabled: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const webhook = real.queue.webhooks.get(this.webhookId);
    if (webhook) webhook.enabled = this.enabled;
    checkStep(model, real);
  }
  toString = () => `${this.enabled ? "enable" : "disable"} webhook ${this.webhookId}`;
}

class Synchronous implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly webhookId: number,
    readonly finish: boolean,
  ) {}
  // At most half the slots, as synchronous-sends.ts allows them.
  check = (model: Readonly<Model>) =>
    this.finish ? model.synchronous.length > 0 : model.synchronous.length < concurrency / 2;
  async run(model: Model, real: Real) {
    if (this.finish) {
      const { webhookId, sendId } = model.synchronous.shift() as { webhookId: number; sendId: number };
      real.worker.synchronousFinished(webhookId, sendId, outcomes["200"]);
    } else {
      const sendId = model.nextSendId--;
      model.synchronous.push({ webhookId: this.webhookId, sendId });
      real.worker.synchronousStarted(this.webhookId, sendId);
    }
    await settle();
    checkStep(model, real);
  }
  toString = () => (this.finish ? "finish a test event" : `start a test event of webhook ${this.webhookId}`);
}

class Advance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    await advance(model, real, this.ms);
  }
  toString = () => `wait ${this.ms} ms`;
}

class ExpireLostLeases implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.thrown.length > 0;
  async run(model: Model, real: Real) {
    real.queue.expireLeases(model.thrown.splice(0));
    real.queue.notify();
    await settle();
    checkStep(model, real);
  }
  toString = () => "the leases of rows whose sender threw run out";
}

class Stop implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.running;
  async run(model: Model, real: Real) {
    model.running = false;
    // Sends still open are left to finish on their own (their outcomes are still recorded).
    const stopping = real.worker.stop(0);
    await settle();
    await stopping;
    expect(real.worker.state.lifecycle).toBe("stopped");
    expect(real.worker.slotUsage.waiting).toBe(0);
    checkStep(model, real);
  }
  toString = () => "stop";
}

const commands = [
  fc
    .tuple(fc.constantFrom(...webhookIds), fc.integer({ min: 1, max: 6 }), fc.boolean())
    .map(([w, n, t]) => new QueueRows(w, n, t && n === 1)),
  fc
    .tuple(fc.constantFrom(...webhookIds), fc.integer({ min: 1, max: 3 }))
    .map(([w, n]) => new HandOver(w, n)),
  fc
    .tuple(fc.nat(), fc.constantFrom<Answer>("200", "500", "410", "429 now", "429 30 s", "timeout"))
    .map(([p, a]) => new AnswerSend(p, a)),
  fc.tuple(fc.nat(), fc.constantFrom<Answer>("200", "429 now")).map(([p, a]) => new AnswerSend(p, a)),
  fc.tuple(fc.constantFrom(...webhookIds), fc.boolean()).map(([w, e]) => new SetEnabled(w, e)),
  fc.tuple(fc.constantFrom(...webhookIds), fc.boolean()).map(([w, f]) => new Synchronous(w, f)),
  fc.constantFrom(1, 60, 1_000, 6_000, 31_000).map((ms) => new Advance(ms)),
  fc.constant(new ExpireLostLeases()),
  fc.constant(new Stop()),
];

function setup(): { model: Model; real: Real } {
  const queue = new ModelWorkerQueue(webhookIds, { autoDisable, retryMaxAttempts });
  const model: Model = {
    running: true,
    open: new Map(),
    synchronous: [],
    nextSendId: -1,
    thrown: [],
    runs: new Map(),
    expectedPaused: [],
    expectedRecorded: new Set(),
  };
  const real: Real = {
    worker: undefined as unknown as DeliveryWorker,
    queue,
    answers: new Map(),
    throwing: new Set(),
    violations: [],
  };
  real.worker = new DeliveryWorker({
    queue,
    workerId: "model",
    concurrency,
    perWebhookConcurrency: concurrency,
    leaseMs: 60_000,
    timeoutMs: 10_000,
    pollIntervalMs: 1_000,
    retryDelaysMs: [1_000],
    retryAfterMaxMs: 3_600_000,
    logger: createLogger("silent"),
    send: (outbound: OutboundDelivery) => {
      const id = Number(outbound.deliveryId);
      const row = queue.claimed.get(id);
      if (row === undefined) real.violations.push(`sent ${id}, which the worker does not hold`);
      else if (!row.enabled) real.violations.push(`sent ${id} of a webhook disabled when it was claimed`);
      if (model.open.has(id)) real.violations.push(`sent ${id} twice at once`);
      // Oldest claim first within a webhook: no row of it claimed earlier is still waiting.
      const claimedAt = queue.claimedAt.get(id) ?? 0;
      for (const [other, earlier] of queue.claimed)
        if (
          earlier.webhook_id === row?.webhook_id &&
          (queue.claimedAt.get(other) ?? 0) < claimedAt &&
          real.worker.rowState(other) === "waiting"
        )
          real.violations.push(`sent ${id} while ${other}, claimed before it, waits`);
      const pausedUntilMs = model.runs.get(row?.webhook_id ?? 0)?.pausedUntilMs ?? 0;
      if (pausedUntilMs > Date.now()) real.violations.push(`sent ${id} while its webhook is paused`);
      if (real.throwing.has(id)) {
        model.thrown.push(id);
        throw new Error("the sender failed before it returned");
      }
      model.open.set(id, row?.webhook_id ?? 0);
      return new Promise((resolve) => real.answers.set(id, resolve));
    },
  });
  return { model, real };
}

/** Answers every send and lets time pass until nothing is left to do; then checks the whole run. */
async function quiesce(model: Model, real: Real) {
  for (let round = 0; round < 8; round += 1) {
    for (const [id, webhookId] of [...model.open]) {
      model.open.delete(id);
      predict(model, id, webhookId, "200");
      real.answers.get(id)?.(outcomes["200"]);
    }
    for (const { webhookId, sendId } of model.synchronous.splice(0))
      real.worker.synchronousFinished(webhookId, sendId, outcomes["200"]);
    await settle();
    await advance(model, real, 31_000);
    if (model.open.size === 0 && (!model.running || real.queue.due.length === 0)) break;
  }
  const { queue, worker } = real;
  expect(model.open.size).toBe(0);
  expect(worker.slotUsage).toEqual({ sending: 0, waiting: 0, inUse: 0 });
  expect(queue.paused).toEqual(model.expectedPaused);
  // Rows of webhooks disabled when claimed are recorded unsent, with no send to answer; the rest are
  // the answers the model expected to be recorded.
  const answered = [...queue.recorded].filter(([, o]) => !o.outcome.errorMessage?.startsWith("Not sent"));
  expect(new Set(answered.map(([id]) => id))).toEqual(model.expectedRecorded);
  if (model.running) {
    // Nothing due is left: every row was claimed and finished, but those left to their lease.
    expect(queue.due.map((d) => d.id)).toEqual([]);
    expect([...queue.claimed.keys()].sort()).toEqual([...model.thrown].sort());
    expect(worker.handOverLease()?.limit).toBe(concurrency);
  }
}

const seed = process.env.WORKER_MODEL_SEED;
const path = process.env.WORKER_MODEL_PATH;
const replayPath = process.env.WORKER_MODEL_REPLAY;

describe("DeliveryWorker against its model", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds a slot exactly while a send is open, records every row once, and leaves nothing due", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(commands, { maxCommands: 40, ...(replayPath ? { replayPath } : {}) }),
        async (steps) => {
          const { model, real } = setup();
          vi.setSystemTime(Date.parse("2026-11-29T12:00:00Z"));
          await real.worker.start();
          await settle();
          try {
            await fc.asyncModelRun(() => ({ model, real }), steps);
            await quiesce(model, real);
          } finally {
            for (const answer of real.answers.values()) answer(outcomes["200"]);
            const stopping = real.worker.stop(0);
            await vi.advanceTimersByTimeAsync(10);
            await stopping;
            vi.clearAllTimers();
          }
        },
      ),
      {
        numRuns: Number(process.env.WORKER_MODEL_RUNS ?? 150),
        ...(seed ? { seed: Number(seed) } : {}),
        ...(path ? { path, endOnFailure: true } : {}),
      },
    );
  });
});
