import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createReviewCache } from "../../src/kube-auth/review-cache.js";

/** A review that counts how often the API server would have been asked. */
function counted(value: string, expiresAt?: number) {
  const review = async () => {
    review.calls++;
    return { value, expiresAt };
  };
  review.calls = 0;
  return review;
}

describe("the review cache", () => {
  it("reuses an answer within its TTL", async () => {
    const cache = createReviewCache<string>({ ttlMs: 60_000, size: 10 });
    const review = counted("yes");
    expect(await cache.answer("a", review)).toBe("yes");
    expect(await cache.answer("a", review)).toBe("yes");
    expect(review.calls).toBe(1);
  });

  it("asks again once the token has expired, whatever the TTL", async () => {
    const cache = createReviewCache<string>({ ttlMs: 60_000, size: 10 });
    const expired = counted("yes", Date.now() - 1);
    await cache.answer("a", expired);
    await cache.answer("a", expired);
    expect(expired.calls).toBe(2);

    const shortLived = counted("yes", Date.now() + 30);
    await cache.answer("b", shortLived);
    await sleep(60);
    await cache.answer("b", shortLived);
    expect(shortLived.calls).toBe(2);
  });

  it("keeps nothing with a TTL of 0, and at most `size` answers", async () => {
    const off = createReviewCache<string>({ ttlMs: 0, size: 10 });
    const review = counted("yes");
    await off.answer("a", review);
    await off.answer("a", review);
    expect(review.calls).toBe(2);

    const small = createReviewCache<string>({ ttlMs: 60_000, size: 1 });
    const first = counted("1");
    await small.answer("a", first);
    await small.answer("b", counted("2"));
    await small.answer("a", first);
    expect(first.calls).toBe(2);
  });

  it("shares one review among concurrent requests, and keeps no failure", async () => {
    const cache = createReviewCache<string>({ ttlMs: 60_000, size: 10 });
    const review = counted("yes");
    expect(await Promise.all([cache.answer("a", review), cache.answer("a", review)])).toEqual(["yes", "yes"]);
    expect(review.calls).toBe(1);

    let failures = 0;
    const failing = async (): Promise<{ value: string; expiresAt: undefined }> => {
      failures++;
      throw new Error("API server unreachable");
    };
    await expect(cache.answer("b", failing)).rejects.toThrow("unreachable");
    await expect(cache.answer("b", failing)).rejects.toThrow("unreachable");
    expect(failures).toBe(2);
  });
});
