import { LRUCache } from "lru-cache";

/**
 * One token bucket per key (a project): `capacity` tokens, refilled evenly over `refillMs`, one taken
 * per send. Written here: rate-limiter-flexible counts in fixed windows (twice the rate gets through
 * across a window's edge) and answers through promises (an await between checking a send's other bounds
 * and taking its token); limiter's TokenBucket is the same three lines of refill arithmetic as below,
 * without the wait a Retry-After needs or a map of keys. The buckets sit in an LRU cache (lru-cache, as
 * elsewhere here): one left alone until full again is the same as one never made, so it expires then,
 * and the map holds only the keys that sent recently, never more than `maxKeys`.
 */
export class TokenBuckets {
  private readonly buckets: LRUCache<number, { tokens: number; atMs: number }>;
  private readonly perMs: number;

  constructor(
    private readonly capacity: number,
    refillMs: number,
    maxKeys = 100_000,
  ) {
    this.perMs = capacity / refillMs;
    // Bounded by a size of one per key rather than by `max`: given `max`, lru-cache allocates its arrays
    // for that many keys at once (about 4 MiB for 100,000, with the ttl's), held from start-up by
    // every instance whether or not a key is ever set; sized, they grow with the keys held.
    this.buckets = new LRUCache({
      maxSize: maxKeys,
      sizeCalculation: () => 1,
      ttl: Math.ceil(refillMs),
      updateAgeOnGet: false,
    });
  }

  /** How long until the key may take a token: 0 when it may now. */
  waitMs(key: number, nowMs = performance.now()): number {
    const tokens = this.tokensOf(key, nowMs);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.perMs);
  }

  /** Takes a token (call after waitMs answered 0). */
  take(key: number, nowMs = performance.now()): void {
    // The cache's ttl restarts with each set: a full refill from now.
    this.buckets.set(key, { tokens: this.tokensOf(key, nowMs) - 1, atMs: nowMs });
  }

  private tokensOf(key: number, nowMs: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.capacity;
    // A monotonic clock (performance.now) by default: a wall clock set back would empty every bucket.
    return Math.min(this.capacity, bucket.tokens + Math.max(0, nowMs - bucket.atMs) * this.perMs);
  }
}
