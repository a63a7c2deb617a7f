import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/logger.js";
import { type ReconcileResult, WorkQueue } from "../../src/operator/work-queue.js";

// The operator's keyed reconcile queue (work-queue.ts), as client-go's workqueue behaves: one handler
// per key at a time, duplicates folded, failures requeued with capped exponential backoff. The handler
// here finishes when the test says so; the clock is fake.

/** A handler whose calls wait until the test finishes them, in the order they started. */
function controlledHandler() {
  const calls: { key: string; at: number; finish: (result?: ReconcileResult | Error) => void }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const handler = (key: string) =>
    new Promise<ReconcileResult>((resolve, reject) => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      calls.push({
        key,
        at: Date.now(),
        finish: (result) => {
          running -= 1;
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
      });
    });
  return { handler, calls, mostAtOnce: () => mostAtOnce, keys: () => calls.map((c) => c.key) };
}

const options = { concurrency: 1, baseDelayMs: 100, maxDelayMs: 300, logger: createLogger("silent") };
/** Lets the queue's promise callbacks run (no time passes). */
const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("WorkQueue", () => {
  it("runs a key added several times while it waits once", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, options);
    queue.add("a");
    queue.add("b");
    queue.add("b");
    queue.add("b");
    h.calls[0]?.finish();
    await flush();
    h.calls[1]?.finish();
    await flush();
    await queue.idle();
    expect(h.keys()).toEqual(["a", "b"]);
  });

  it("runs a key added while it is being handled once more afterwards, never twice at once", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, { ...options, concurrency: 4 });
    queue.add("a");
    queue.add("a");
    queue.add("a");
    expect(h.keys()).toEqual(["a"]);
    h.calls[0]?.finish();
    await flush();
    expect(h.keys()).toEqual(["a", "a"]);
    h.calls[1]?.finish();
    await queue.idle();
    expect(h.keys()).toEqual(["a", "a"]);
    expect(h.mostAtOnce()).toBe(1);
  });

  it("handles at most `concurrency` keys at once, in the order they came", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, { ...options, concurrency: 2 });
    for (const key of ["a", "b", "c", "d", "e"]) queue.add(key);
    for (let finished = 0; finished < 5; finished += 1) {
      expect(h.calls.length - finished).toBeLessThanOrEqual(2);
      h.calls[finished]?.finish();
      await flush();
    }
    await queue.idle();
    expect(h.keys()).toEqual(["a", "b", "c", "d", "e"]);
    expect(h.mostAtOnce()).toBe(2);
  });

  it("requeues a failing key after 100, 200, then at most 300 ms, and starts again from 100 after a success", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, options);
    const start = Date.now();
    queue.add("a");
    const failLast = async () => {
      h.calls.at(-1)?.finish(new Error("the API server refused"));
      await flush();
    };
    await failLast();
    await vi.advanceTimersByTimeAsync(100);
    await failLast();
    await vi.advanceTimersByTimeAsync(200);
    await failLast();
    await vi.advanceTimersByTimeAsync(300);
    await failLast();
    await vi.advanceTimersByTimeAsync(300);
    h.calls.at(-1)?.finish();
    await flush();
    queue.add("a");
    await failLast();
    await vi.advanceTimersByTimeAsync(100);
    expect(h.calls.map((c) => c.at - start)).toEqual([0, 100, 300, 600, 900, 900, 1_000]);
    h.calls.at(-1)?.finish();
    await queue.idle();
  });

  it("runs a key again when its handler asks to, once however often it is asked, at the earliest time", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, options);
    queue.add("a");
    h.calls[0]?.finish({ requeueAfterMs: 1_000 });
    await flush();
    queue.addAfter("a", 500);
    queue.addAfter("a", 800);
    await vi.advanceTimersByTimeAsync(499);
    expect(h.keys()).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.keys()).toEqual(["a", "a"]);
    h.calls[1]?.finish();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(h.keys()).toEqual(["a", "a"]);
    await queue.idle();
  });

  it("retries a failed key after its backoff even when a recheck far off is scheduled", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, options);
    queue.add("a");
    // A rollout looked at again at its progress deadline, ten minutes off…
    h.calls[0]?.finish({ requeueAfterMs: 600_000 });
    await flush();
    // …then changes, and recording the change fails (a deadlock, a lost connection).
    queue.add("a");
    await flush();
    h.calls[1]?.finish(new Error("deadlock detected"));
    await flush();
    await vi.advanceTimersByTimeAsync(100);
    expect(h.keys()).toEqual(["a", "a", "a"]);
    h.calls[2]?.finish();
    await queue.idle();
  });

  it("stops: drops waiting and scheduled keys, waits for the running one, and takes nothing after", async () => {
    const h = controlledHandler();
    const queue = new WorkQueue(h.handler, options);
    queue.add("a");
    queue.add("b");
    queue.addAfter("c", 100);
    queue.add("a"); // changed while it runs: dropped by stop like the waiting ones
    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
    });
    queue.add("d");
    await flush();
    expect(stopped).toBe(false);
    h.calls[0]?.finish();
    await stopping;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(h.keys()).toEqual(["a"]);
  });

  it("is idle at once when nothing waits or runs", async () => {
    const queue = new WorkQueue(controlledHandler().handler, options);
    await expect(queue.idle()).resolves.toBeUndefined();
  });
});
