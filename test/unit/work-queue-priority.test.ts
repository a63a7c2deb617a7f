import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { type ReconcileResult, WorkQueue } from "../../src/operator/work-queue.js";

/**
 * A queue whose handler records the order keys ran in and holds each until released, so what is
 * waiting can be arranged before anything is taken.
 */
function recordingQueue(concurrency = 1) {
  const order: string[] = [];
  const held: Array<() => void> = [];
  const queue = new WorkQueue(
    (key) => {
      order.push(key);
      return new Promise<ReconcileResult>((resolve) => held.push(() => resolve(undefined)));
    },
    { concurrency, baseDelayMs: 1, maxDelayMs: 1, logger: createLogger("silent") },
  );
  const releaseAll = async () => {
    while (held.length > 0 || order.length === 0) {
      held.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { queue, order, held, releaseAll };
}

describe("WorkQueue priority", () => {
  it("takes a live key before every backlog key added earlier", async () => {
    const { queue, order, releaseAll } = recordingQueue();
    queue.add("blocker", "backlog");
    for (const key of ["old-1", "old-2", "old-3"]) queue.add(key, "backlog");
    queue.add("new", "live");
    await releaseAll();
    await queue.idle();
    expect(order).toEqual(["blocker", "new", "old-1", "old-2", "old-3"]);
  });

  it("keeps each tier in the order added", async () => {
    const { queue, order, releaseAll } = recordingQueue();
    queue.add("blocker", "live");
    queue.add("old-1", "backlog");
    queue.add("new-1", "live");
    queue.add("old-2", "backlog");
    queue.add("new-2", "live");
    await releaseAll();
    await queue.idle();
    expect(order).toEqual(["blocker", "new-1", "new-2", "old-1", "old-2"]);
  });

  it("moves a waiting backlog key up when it is added live, and runs it once", async () => {
    const { queue, order, releaseAll } = recordingQueue();
    queue.add("blocker", "backlog");
    for (const key of ["old-1", "old-2", "old-3"]) queue.add(key, "backlog");
    queue.add("old-3", "live");
    queue.add("old-3", "backlog");
    await releaseAll();
    await queue.idle();
    expect(order).toEqual(["blocker", "old-3", "old-1", "old-2"]);
  });

  it("runs a key changed live while it ran once more, ahead of the backlog", async () => {
    const { queue, order, releaseAll } = recordingQueue();
    queue.add("busy", "backlog");
    queue.add("old-1", "backlog");
    queue.add("busy", "backlog");
    queue.add("busy", "live");
    await releaseAll();
    await queue.idle();
    expect(order).toEqual(["busy", "busy", "old-1"]);
  });

  it("is first in, first out without priorities (every add is live by default)", async () => {
    const { queue, order, releaseAll } = recordingQueue();
    for (const key of ["a", "b", "c"]) queue.add(key);
    await releaseAll();
    await queue.idle();
    expect(order).toEqual(["a", "b", "c"]);
  });
});
