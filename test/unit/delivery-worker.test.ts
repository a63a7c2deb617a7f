import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedDelivery, ClaimRequest, RecordedOutcome } from "../../src/delivery-engine/queue.js";
import type { DeliveryOutcome, OutboundDelivery } from "../../src/delivery-engine/sender.js";
import { DeliveryWorker } from "../../src/delivery-engine/worker.js";
import type { WorkerQueue } from "../../src/delivery-engine/worker-queue.js";
import { createLogger } from "../../src/logger.js";

// The delivery worker's states (worker.ts: WorkerLifecycle, TurnState) and what moves it between them,
// with fake timers and a queue kept in memory in place of Postgres (the WorkerQueue seam). The worker
// against the real database is test/integration/delivery-engine.test.ts's.

/** The queue in memory: rows to claim, and every statement the worker ran. */
class MemoryQueue implements WorkerQueue {
  due: ClaimedDelivery[] = [];
  statements: { outcomes: number[]; limit: number }[] = [];
  released: number[] = [];
  releasedAll = 0;
  dueRetryRuns = 0;
  listening = false;
  /** Makes the next statements fail with these errors, one each. */
  failures: unknown[] = [];
  /** While set, statements wait for it: a turn in progress. */
  gate: Promise<void> | undefined;
  running = 0;
  mostRunningAtOnce = 0;
  notify: () => void = () => {};

  async recordAndClaim(outcomes: RecordedOutcome[], claim: ClaimRequest): Promise<ClaimedDelivery[]> {
    this.statements.push({ outcomes: outcomes.map((o) => o.id), limit: claim.limit });
    this.running += 1;
    this.mostRunningAtOnce = Math.max(this.mostRunningAtOnce, this.running);
    try {
      await this.gate;
      if (this.failures.length > 0) throw this.failures.shift();
      return this.due.splice(0, claim.limit);
    } finally {
      this.running -= 1;
    }
  }
  async queueDueRetries(): Promise<number> {
    this.dueRetryRuns += 1;
    return 0;
  }
  async releaseClaimsOf(ids: number[]): Promise<void> {
    this.released.push(...ids);
  }
  paused: { webhookId: number; deliveryId: number; untilMs: number }[] = [];
  async pauseWebhook(pause: { webhookId: number; deliveryId: number; untilMs: number }): Promise<void> {
    this.paused.push(pause);
  }
  async releaseClaims(): Promise<number> {
    this.releasedAll += 1;
    return 0;
  }
  listen(onNotify: () => void) {
    this.notify = onNotify;
    return {
      start: async () => {
        this.listening = true;
      },
      stop: async () => {
        this.listening = false;
      },
    };
  }
}

const delivery = (id: number, webhookId = id): ClaimedDelivery => ({
  id,
  webhook_id: webhookId,
  event_type: "deployment.created",
  url: "http://127.0.0.1:1/hook",
  secret: null,
  body: "{}",
  queued_at_ms: Date.now(),
  attempt_number: 1,
  enabled: true,
  retry_max_attempts: null,
  counted_by_policy: false,
  more_due: false,
  shape: null,
  rollout_id: null,
  pace_interval_ms: null,
});

const answered: DeliveryOutcome = {
  success: true,
  statusCode: 200,
  responseBody: "",
  errorMessage: null,
  failure: null,
  durationMs: 1,
  requestTimestamp: 1,
  signature: null,
};

let queue: MemoryQueue;
/** Sends in flight, by delivery id: answer one to finish it. */
let sends: Map<number, (outcome: DeliveryOutcome) => void>;
let sent: number[];
let worker: DeliveryWorker;

function workerOptions(concurrency: number) {
  return {
    queue,
    workerId: "worker-1",
    concurrency,
    perWebhookConcurrency: 16,
    leaseMs: 60_000,
    timeoutMs: 10_000,
    pollIntervalMs: 600_000,
    retryDelaysMs: [1_000],
    retryAfterMaxMs: 3_600_000,
    logger: createLogger("silent"),
  };
}

function createWorker(overrides: { concurrency?: number; pollIntervalMs?: number } = {}) {
  return new DeliveryWorker({
    queue,
    workerId: "worker-1",
    concurrency: overrides.concurrency ?? 16,
    perWebhookConcurrency: 16,
    leaseMs: 60_000,
    timeoutMs: 10_000,
    pollIntervalMs: overrides.pollIntervalMs ?? 600_000,
    retryDelaysMs: [1_000],
    retryAfterMaxMs: 3_600_000,
    send: (outbound: OutboundDelivery) =>
      new Promise((resolve) => {
        sent.push(Number(outbound.deliveryId));
        sends.set(Number(outbound.deliveryId), resolve);
      }),
    logger: createLogger("silent"),
  });
}

const answer = (id: number) => sends.get(id)?.(answered);
/**
 * Lets the turns that are due now run: a turn starts on the next setImmediate (left real: it is not a
 * wait on time, and the clock stands still meanwhile), and a turn that ends may start one more.
 */
async function settle() {
  for (let round = 0; round < 5; round += 1) await new Promise((resolve) => setImmediate(resolve));
}
/** Moves the fake clock on, firing the worker's timers, then lets the turns they started run. */
async function advance(ms: number) {
  await vi.advanceTimersByTimeAsync(ms);
  await settle();
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  queue = new MemoryQueue();
  sends = new Map();
  sent = [];
  worker = createWorker();
});
afterEach(async () => {
  for (const id of sends.keys()) answer(id);
  await worker.stop(1_000);
  vi.useRealTimers();
});

describe("DeliveryWorker's lifecycle", () => {
  it("is new until started; started, it listens, queues due retries and claims its free slots", async () => {
    expect(worker.state).toEqual({ lifecycle: "new", turn: "idle" });
    queue.due = [delivery(1), delivery(2)];
    await worker.start();
    expect(worker.state).toEqual({ lifecycle: "running", turn: "turning" });
    expect(queue.listening).toBe(true);
    expect(queue.dueRetryRuns).toBe(1);
    await settle();
    expect(queue.statements).toEqual([{ outcomes: [], limit: 16 }]);
    expect(sent).toEqual([1, 2]);
    expect(worker.state.turn).toBe("idle");
  });

  it("stopping, claims no more, waits for its sends, records them, releases the rest, then stays quiet", async () => {
    queue.due = [delivery(1), delivery(2)];
    await worker.start();
    await settle();
    queue.due = [delivery(3)];
    const stopping = worker.stop(10_000);
    expect(worker.state.lifecycle).toBe("stopping");
    answer(1);
    answer(2);
    await settle();
    await stopping;
    expect(worker.state).toEqual({ lifecycle: "stopped", turn: "idle" });
    expect(queue.statements.at(-1)).toEqual({ outcomes: [1, 2], limit: 0 });
    expect(queue.releasedAll).toBe(1);
    expect(queue.listening).toBe(false);

    const statements = queue.statements.length;
    queue.notify();
    await advance(10 * 60_000);
    expect(queue.statements).toHaveLength(statements);
    expect(queue.dueRetryRuns).toBe(1);
    expect(sent).toEqual([1, 2]);
  });

  it("hands rows given to it while stopping back to the queue, unsent", async () => {
    await worker.start();
    await settle();
    const stopping = worker.stop(1_000);
    worker.takeHandedOver([delivery(5)]);
    await settle();
    await stopping;
    expect(queue.released).toEqual([5]);
    expect(sent).toEqual([]);
  });

  it("offers an emit its free slots only while running", async () => {
    expect(worker.handOverLease()).toBeUndefined();
    await worker.start();
    expect(worker.handOverLease()).toMatchObject({ workerId: "worker-1", limit: 16 });
    void worker.stop(1_000);
    expect(worker.handOverLease()).toBeUndefined();
  });
});

describe("DeliveryWorker's turns", () => {
  it("claims at once on a NOTIFY; NOTIFYs during a turn make one turn more, never two at once", async () => {
    await worker.start();
    await settle();
    let open = () => {};
    queue.gate = new Promise((resolve) => {
      open = resolve;
    });
    queue.due = [delivery(1)];
    queue.notify();
    await settle();
    expect(worker.state.turn).toBe("turning");
    expect(queue.statements).toHaveLength(2);
    queue.notify();
    queue.notify();
    await settle();
    expect(queue.statements).toHaveLength(2);

    queue.gate = undefined;
    open();
    await settle();
    expect(queue.statements).toHaveLength(3);
    expect(queue.mostRunningAtOnce).toBe(1);
    expect(worker.state.turn).toBe("idle");
  });

  it("lets a finished send's outcome wait up to 50 ms for others when nothing is queued", async () => {
    queue.due = [delivery(1), delivery(2)];
    await worker.start();
    await settle();
    answer(1);
    await settle();
    expect(worker.state.turn).toBe("gathering");
    await advance(49);
    expect(queue.statements).toHaveLength(1);
    answer(2);
    await advance(1);
    // Both outcomes in one statement; the last claim came back short, so it claims nothing.
    expect(queue.statements.at(-1)).toEqual({ outcomes: [1, 2], limit: 0 });
    expect(worker.state.turn).toBe("idle");
  });

  it("ends that wait at once when a NOTIFY says something was queued", async () => {
    queue.due = [delivery(1)];
    await worker.start();
    await settle();
    answer(1);
    await settle();
    expect(worker.state.turn).toBe("gathering");
    queue.notify();
    await settle();
    expect(queue.statements.at(-1)).toEqual({ outcomes: [1], limit: 24 });
  });

  it("keeps the outcomes while the database is out of reach and tries again, waiting twice as long each time", async () => {
    queue.due = [delivery(1)];
    await worker.start();
    await settle();
    queue.failures = [new Error("Connection terminated unexpectedly"), new Error("connect ECONNREFUSED")];
    answer(1);
    queue.notify();
    await settle();
    expect(queue.statements).toHaveLength(2);
    await advance(199);
    expect(queue.statements).toHaveLength(2);
    await advance(1);
    expect(queue.statements).toHaveLength(3);
    await advance(399);
    expect(queue.statements).toHaveLength(3);
    await advance(1);
    expect(queue.statements.map((s) => s.outcomes)).toEqual([[], [1], [1], [1]]);
  });

  it("lets the outcomes go when the database itself refused the statement (their rows are sent again later)", async () => {
    queue.due = [delivery(1)];
    await worker.start();
    await settle();
    const refused = new pg.DatabaseError("syntax error", 0, "error");
    refused.code = "42601";
    queue.failures = [refused];
    answer(1);
    queue.notify();
    await settle();
    await advance(200);
    expect(queue.statements.map((s) => s.outcomes)).toEqual([[], [1], []]);
  });

  it("polls: every interval it queues due retries and claims, even after a short claim", async () => {
    worker = createWorker({ pollIntervalMs: 1_000 });
    await worker.start();
    await settle();
    expect(queue.statements).toHaveLength(1);
    queue.due = [delivery(1)];
    await advance(1_000);
    expect(queue.dueRetryRuns).toBe(2);
    expect(queue.statements).toHaveLength(2);
    expect(sent).toEqual([1]);
  });

  it("gives a claimed row back unsent once it waited too long for its webhook's sends", async () => {
    worker = createWorker({ pollIntervalMs: 1_000 });
    // A webhook may have 2 sends in flight before its receiver has answered: the third waits.
    queue.due = [delivery(1, 7), delivery(2, 7), delivery(3, 7)];
    await worker.start();
    await settle();
    expect(sent).toEqual([1, 2]);
    await advance(4_000);
    expect(queue.released).toEqual([]);
    // Past 5 s (a quarter of the delivery timeout, at least 5 s) it goes back to the queue.
    await advance(2_000);
    expect(queue.released).toEqual([3]);
    expect(sent).toEqual([1, 2]);
  });
});

describe("DeliveryWorker's pauses", () => {
  const throttled = (retryAfter: string): DeliveryOutcome => ({
    ...answered,
    success: false,
    statusCode: 429,
    failure: "http",
    retryAfter,
  });

  it.each([
    ["0", "0"],
    ["a date in the past", "Fri, 27 Nov 2026 11:00:00 GMT"],
  ])("pauses at least a second for Retry-After %s", async (_name, retryAfter) => {
    queue.due = [delivery(1, 7)];
    await worker.start();
    await settle();
    sends.get(1)?.(throttled(retryAfter));
    await settle();
    expect(queue.paused).toEqual([
      { webhookId: 7, deliveryId: 1, untilMs: Date.now() + 1_000, reason: expect.any(String) },
    ]);
  });

  it("after 5 pauses in a row records the receiver's next pausing answers as failed attempts", async () => {
    await worker.start();
    await settle();
    for (let id = 1; id <= 7; id += 1) {
      queue.due = [delivery(id, 7)];
      queue.notify();
      await settle();
      sends.get(id)?.(throttled("0"));
      // The pause (a second) ends before the next row is queued.
      await advance(1_000);
    }
    await advance(100);
    expect(queue.paused.map((p) => p.deliveryId)).toEqual([1, 2, 3, 4, 5]);
    expect(queue.statements.flatMap((s) => s.outcomes)).toEqual([6, 7]);
    // Any other answer ends the run: the next 429 pauses again.
    queue.due = [delivery(8, 7), delivery(9, 7)];
    queue.notify();
    await settle();
    answer(8);
    await settle();
    sends.get(9)?.(throttled("0"));
    await settle();
    expect(queue.paused.map((p) => p.deliveryId)).toEqual([1, 2, 3, 4, 5, 9]);
  });

  it("stores a receiver's 429 Retry-After as a pause, records no attempt, and sends no more of that webhook meanwhile", async () => {
    queue.due = [delivery(1, 7), delivery(2, 8)];
    await worker.start();
    await settle();
    expect(sent).toEqual([1, 2]);
    sends.get(1)?.({ ...answered, success: false, statusCode: 429, failure: "http", retryAfter: "30" });
    answer(2);
    await settle();
    expect(queue.paused).toEqual([
      { webhookId: 7, deliveryId: 1, untilMs: Date.now() + 30_000, reason: expect.any(String) },
    ]);
    // Webhook 8's outcome is recorded; the paused delivery is not an attempt.
    await advance(100);
    expect(queue.statements.flatMap((s) => s.outcomes)).toEqual([2]);
    // Rows of the paused webhook claimed meanwhile go back unsent; another webhook's are sent.
    queue.due = [delivery(3, 7), delivery(4, 9)];
    worker.wake();
    await settle();
    expect(sent).toEqual([1, 2, 4]);
    expect(queue.released).toContain(3);
  });
});

describe("DeliveryWorker's slots", () => {
  it("gives back the slot of a row whose webhook was disabled (recorded unsent, at once): later rows are sent", async () => {
    worker = createWorker({ concurrency: 4 });
    queue.due = [1, 2, 3, 4, 5, 6].map((id) => ({ ...delivery(id, 7), enabled: false }));
    await worker.start();
    await advance(100);
    expect(queue.statements.flatMap((s) => s.outcomes).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    queue.due = [delivery(8), delivery(9), delivery(10), delivery(11)];
    queue.notify();
    await settle();
    expect(sent).toEqual([8, 9, 10, 11]);
    expect(worker.slotUsage).toEqual({ sending: 4, waiting: 0, inUse: 4 });
  });

  it("gives back the slot of a send that throws before it returns; the row is left to its lease, not recorded", async () => {
    worker = new DeliveryWorker({
      ...workerOptions(2),
      send: (outbound) => {
        if (Number(outbound.deliveryId) < 3) throw new Error("a bug in the sender");
        return new Promise((resolve) => {
          sent.push(Number(outbound.deliveryId));
          sends.set(Number(outbound.deliveryId), resolve);
        });
      },
    });
    queue.due = [delivery(1), delivery(2)];
    await worker.start();
    await advance(100);
    expect(worker.slotUsage).toEqual({ sending: 0, waiting: 0, inUse: 0 });
    expect(queue.statements.flatMap((s) => s.outcomes)).toEqual([]);
    queue.due = [delivery(3), delivery(4)];
    queue.notify();
    await settle();
    expect(sent).toEqual([3, 4]);
  });

  it("counts a send open past twice the longest a send can take as stuck", async () => {
    queue.due = [delivery(1)];
    await worker.start();
    await settle();
    // The delivery timeout is 10 s: a send ends by 10 s + 10 s to connect + 1 s.
    await advance(42_000);
    expect(worker.stuckSends()).toBe(0);
    await advance(1);
    expect(worker.stuckSends()).toBe(1);
    answer(1);
    await settle();
    expect(worker.stuckSends()).toBe(0);
  });
});
