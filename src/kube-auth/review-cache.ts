import { LRUCache } from "lru-cache";

/**
 * Answers of the API server, reused for a brief TTL and never past the token's expiry. Keys are built
 * from token digests (never tokens). Concurrent requests for the same key share one review.
 */
export interface ReviewCache<V> {
  answer(key: string, review: () => Promise<{ value: V; expiresAt: number | undefined }>): Promise<V>;
}

export function createReviewCache<V extends {}>(settings: { ttlMs: number; size: number }): ReviewCache<V> {
  const answers = new LRUCache<string, V>({ max: settings.size });
  const inFlight = new Map<string, Promise<V>>();
  return {
    answer(key, review) {
      const cached = answers.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      let pending = inFlight.get(key);
      if (!pending) {
        pending = review()
          .then(({ value, expiresAt }) => {
            const ttl = Math.floor(
              Math.min(settings.ttlMs, (expiresAt ?? Number.POSITIVE_INFINITY) - Date.now()),
            );
            if (ttl >= 1) answers.set(key, value, { ttl });
            return value;
          })
          .finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}
