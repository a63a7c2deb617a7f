import type { Queryable } from "../db/pool.js";
import { listApiKeyHashes } from "./store.js";

// Whether a digest belongs to any key, answered from memory: asked only for a credential from a
// paced source (auth-pacing.ts), so that a guess costs no query while a valid key is still checked
// and let through. Every key's digest is read in one query, at most once a second however many
// guesses arrive, and only while some source is paced. A key created on this replica is known at
// once; one created on another replica within the last second may be answered 429 once.

/** How old the digests may be before a paced source's credential reads them again. */
export const knownDigestsMaxAgeMs = 1_000;

export interface KnownDigests {
  has(digest: Buffer): Promise<boolean>;
  /** A key created on this replica. */
  added(digest: Buffer): void;
}

export function createKnownDigests(
  pool: Queryable,
  maxAgeMs = knownDigestsMaxAgeMs,
  now = Date.now,
): KnownDigests {
  let known: { digests: Set<string>; readAt: number } | undefined;
  let reading: Promise<void> | undefined;
  const read = async () => {
    const readAt = now();
    const digests = await listApiKeyHashes(pool);
    known = { digests: new Set(digests.map((digest) => digest.toString("hex"))), readAt };
  };
  return {
    async has(digest) {
      if (!known || now() - known.readAt >= maxAgeMs) {
        reading ??= read().finally(() => {
          reading = undefined;
        });
        await reading;
      }
      return known?.digests.has(digest.toString("hex")) ?? false;
    },
    added(digest) {
      known?.digests.add(digest.toString("hex"));
    },
  };
}
