import { LRUCache } from "lru-cache";
import type { Queryable } from "../db/pool.js";
import type { ApiKeyAuth } from "../http/auth-context.js";
import { hashesEqual } from "./keys.js";
import { findApiKeyByHash, touchApiKey } from "./store.js";

// A key the database confirmed is remembered for API_KEY_CACHE_TTL_MS, so a burst with one key (3,000
// test events at once, nearly all answered 429) costs one query and no database connection per
// request, and the other tenants do not wait behind it for the pool. Requests that arrive while a key
// is being looked up share that one query. Revocation: the replica that revokes a key forgets it at
// once; another replica accepts it for at most the TTL after (0 turns the memory off).

/** The most keys remembered at once (about 200 bytes each), the most recently used. */
export const verifiedKeysLimit = 10_000;

export interface VerifiedKeys {
  /** Who holds the key of this digest, from memory or the database; undefined when no key has it. */
  verify(digest: Buffer): Promise<ApiKeyAuth | undefined>;
  /** Whether `verify` would answer from memory, without a query. */
  remembers(digest: Buffer): boolean;
  /** Forgets a revoked key at once, and any lookup of it still running. */
  forget(keyId: number): void;
}

export function createVerifiedKeys(pool: Queryable, ttlMs: number): VerifiedKeys {
  // Sized (one per key) rather than given `max`, which makes lru-cache allocate for every key at once.
  const verified = new LRUCache<string, ApiKeyAuth>({
    maxSize: verifiedKeysLimit,
    sizeCalculation: () => 1,
    ttl: Math.max(ttlMs, 1),
  });
  const lookups = new Map<string, Promise<ApiKeyAuth | undefined>>();
  // A lookup that began before a revocation must not put the key back: it is remembered only when no
  // key was revoked meanwhile.
  let revocations = 0;
  const lookUp = async (digest: Buffer): Promise<ApiKeyAuth | undefined> => {
    const row = await findApiKeyByHash(pool, digest);
    // The lookup is by digest; the constant-time comparison guards the final decision anyway.
    if (!row || !hashesEqual(row.key_hash, digest)) return undefined;
    void touchApiKey(pool, row.id).catch(() => {});
    return Object.freeze({ method: "api_key", keyId: row.id, projectIds: row.project_ids });
  };
  return {
    async verify(digest) {
      const id = digest.toString("hex");
      const known = ttlMs > 0 ? verified.get(id) : undefined;
      if (known) return known;
      let lookup = lookups.get(id);
      if (!lookup) {
        const startedAt = revocations;
        lookup = lookUp(digest).then((auth) => {
          if (auth && ttlMs > 0 && revocations === startedAt) verified.set(id, auth);
          return auth;
        });
        lookups.set(id, lookup);
        void lookup.finally(() => lookups.delete(id)).catch(() => {});
      }
      return lookup;
    },
    remembers(digest) {
      return ttlMs > 0 && verified.has(digest.toString("hex"));
    },
    forget(keyId) {
      revocations += 1;
      lookups.clear();
      for (const [id, auth] of verified.entries()) if (auth.keyId === keyId) verified.delete(id);
    },
  };
}
