import v8 from "node:v8";
import { describe, expect, it } from "vitest";
import { ReceiverLimits } from "../../src/delivery-engine/receiver-limits.js";
import type { DeliveryOutcome } from "../../src/delivery-engine/sender.js";
import {
  isSendRefusal,
  type SendAccounting,
  type SendSlot,
  SynchronousSends,
} from "../../src/delivery-engine/synchronous-sends.js";
import { TokenBuckets } from "../../src/delivery-engine/token-buckets.js";

/** The worker's part, kept in real ReceiverLimits as the worker keeps it. */
function accounting(): SendAccounting & { limits: ReceiverLimits } {
  const limits = new ReceiverLimits({ initial: 2, max: 16, restrictedBudget: 16, slowAfterMs: 5_000 });
  return {
    limits,
    sendsInFlightOf: (webhookId) => limits.inFlight(webhookId),
    synchronousStarted: (webhookId, sendId) => {
      limits.claimed(webhookId);
      limits.started(webhookId, sendId);
    },
    synchronousFinished: (webhookId, sendId, outcome) => limits.finished(webhookId, sendId, outcome),
  };
}

const settings = {
  replica: 32,
  perWebhook: 16,
  perProjectConcurrency: 8,
  perProjectPerMinute: 0,
  perProjectPerDay: 0,
};

function slot(reserved: ReturnType<SynchronousSends["reserve"]>): SendSlot {
  if (isSendRefusal(reserved)) throw new Error(`refused: ${reserved.refused}`);
  return reserved;
}

const success = { success: true, statusCode: 200 } as DeliveryOutcome;

describe("SynchronousSends", () => {
  it.each([
    {
      bound: "project",
      limits: { perProjectConcurrency: 3 },
      taken: [
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      next: [1, 4],
    },
    {
      bound: "webhook",
      limits: { perWebhook: 2 },
      taken: [
        [1, 1],
        [2, 1],
      ],
      next: [3, 1],
    },
    {
      bound: "replica",
      limits: { replica: 3 },
      taken: [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      next: [4, 4],
    },
  ] as const)(
    "refuses the send over the $bound bound until one of those in flight ends",
    ({ bound, limits, taken, next }) => {
      const sends = new SynchronousSends(accounting(), { ...settings, ...limits });
      const slots = taken.map(([projectId, webhookId]) => slot(sends.reserve(projectId, webhookId)));
      expect(sends.reserve(next[0], next[1])).toMatchObject({ refused: bound, retryAfterMs: 1_000 });
      slots[0]?.release(success);
      expect(isSendRefusal(sends.reserve(next[0], next[1]))).toBe(false);
    },
  );

  it("counts the worker's own sends of a webhook against its limit, and releases a slot once", () => {
    const worker = accounting();
    const sends = new SynchronousSends(worker, { ...settings, perWebhook: 2 });
    worker.limits.claimed(7);
    worker.limits.started(7, 1001); // a claimed delivery in flight
    const first = slot(sends.reserve(1, 7));
    expect(sends.reserve(1, 7)).toMatchObject({ refused: "webhook", limit: 2 });
    first.release();
    first.release();
    expect(worker.limits.inFlight(7)).toBe(1);
  });

  it("paces a project by its per-minute bucket, with the wait until its next token, and other projects not", () => {
    const sends = new SynchronousSends(accounting(), { ...settings, perProjectPerMinute: 2 });
    // Asking whether the project is over takes nothing.
    for (let i = 0; i < 5; i++) expect(sends.projectRefusal(1)).toBeUndefined();
    slot(sends.reserve(1, 1)).release(success);
    slot(sends.reserve(1, 1)).release(success);
    const refusal = sends.reserve(1, 1);
    expect(refusal).toMatchObject({ refused: "per-minute", limit: 2 });
    expect(sends.projectRefusal(1)).toMatchObject({ refused: "per-minute" });
    expect(isSendRefusal(refusal) && refusal.retryAfterMs).toBeGreaterThan(29_000);
    expect(isSendRefusal(sends.reserve(2, 2))).toBe(false);
  });

  it("bounds a project per day", () => {
    const sends = new SynchronousSends(accounting(), { ...settings, perProjectPerDay: 1 });
    slot(sends.reserve(1, 1)).release(success);
    expect(sends.reserve(1, 1)).toMatchObject({ refused: "per-day", limit: 1 });
  });
});

describe("TokenBuckets", () => {
  it("starts full, refills evenly, never beyond its capacity", () => {
    const buckets = new TokenBuckets(3, 3_000);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(buckets.waitMs(5, t0)).toBe(0);
      buckets.take(5, t0);
    }
    expect(buckets.waitMs(5, t0)).toBe(1_000);
    expect(buckets.waitMs(5, t0 + 400)).toBe(600);
    expect(buckets.waitMs(5, t0 + 1_000)).toBe(0);
    // A long pause refills it to 3, not more.
    for (let i = 0; i < 3; i++) buckets.take(5, t0 + 60_000);
    expect(buckets.waitMs(5, t0 + 60_000)).toBe(1_000);
  });

  it("does not empty a bucket when the clock it is given goes back", () => {
    const buckets = new TokenBuckets(2, 2_000);
    buckets.take(5, 1_000_000);
    expect(buckets.waitMs(5, 1_000_000 - 600_000)).toBe(0);
  });

  it("keeps at most maxKeys buckets, forgetting the one used longest ago (full again)", () => {
    const buckets = new TokenBuckets(1, 60_000, 2);
    const t0 = 1_000_000;
    for (const key of [1, 2, 3]) buckets.take(key, t0);
    expect(buckets.waitMs(1, t0)).toBe(0);
    expect(buckets.waitMs(2, t0)).toBe(60_000);
    expect(buckets.waitMs(3, t0)).toBe(60_000);
  });

  it("takes memory for the keys it holds, not for the most it may hold", () => {
    // Every replica makes three at start-up (test events, replays, previews) and most never hold a key.
    const usedBytes = () => v8.getHeapStatistics().used_heap_size + process.memoryUsage().arrayBuffers;
    const before = usedBytes();
    const made = Array.from({ length: 20 }, () => new TokenBuckets(10, 60_000, 100_000));
    const grownMiB = (usedBytes() - before) / 1024 / 1024;
    expect(made).toHaveLength(20);
    expect(grownMiB).toBeLessThan(8);
  });
});
