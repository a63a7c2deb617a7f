import { LRUCache } from "lru-cache";
import { TooManyRequestsError } from "../errors.js";
import type { Logger } from "../logger.js";

// Failed authentications are paced per source address, so guessing keys over the API (or the metrics
// token) is slow (it ran at 3,800 guesses/s) and every guesser is named once in the log. A source is the
// client's address (the peer's, or the one a trusted proxy forwarded: TRUSTED_PROXIES), an IPv6 one
// counted by its /64 (one host holds a whole /64, and could otherwise rotate through it). Pacing refuses
// failures, never a valid credential: the authenticators ask `refusal` only once a credential failed, or
// could not be checked without work a guess must not cost (auth.ts). Memory is bounded: the most
// recently failing sources are remembered, the rest forgotten.

export const pacingWindowMs = 60_000;
/** The most sources remembered at once (about 100 bytes each). */
export const pacedSourcesLimit = 10_000;

/** A failed credential of a source that failed too often: answered 429 until its window ends. */
export class AuthenticationPacedError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number) {
    super(
      `Too many failed authentications from this address; try again in ${retryAfterSeconds} s.`,
      retryAfterSeconds,
    );
  }
}

interface Window {
  startedAt: number;
  failures: number;
}

export interface AuthPacer {
  /** The answer a failure of `address` gets while it is paced; undefined while it is not. */
  refusal(address: string | undefined): AuthenticationPacedError | undefined;
  /** Counts a credential refused for `address`; `reason` is the answer's message, never the credential. */
  failed(address: string | undefined, reason: string): void;
}

/** Paces a source once it has `failuresPerMinute` failures in a window of a minute; 0 turns pacing off. */
export function createAuthPacer(failuresPerMinute: number, logger: Logger, now = Date.now): AuthPacer {
  // Sized (one per source) rather than given `max`, which makes lru-cache allocate for every source at once.
  const windows = new LRUCache<string, Window>({ maxSize: pacedSourcesLimit, sizeCalculation: () => 1 });
  const current = (source: string): Window | undefined => {
    const window = windows.get(source);
    return window && now() - window.startedAt < pacingWindowMs ? window : undefined;
  };
  return {
    refusal(address) {
      if (failuresPerMinute === 0) return undefined;
      const window = current(sourceOf(address));
      if (!window || window.failures < failuresPerMinute) return undefined;
      const left = window.startedAt + pacingWindowMs - now();
      return new AuthenticationPacedError(Math.max(1, Math.ceil(left / 1000)));
    },
    failed(address, reason) {
      if (failuresPerMinute === 0) return;
      const source = sourceOf(address);
      const window = current(source) ?? { startedAt: now(), failures: 0 };
      window.failures += 1;
      windows.set(source, window);
      if (window.failures === failuresPerMinute) {
        // One line per episode: the failures before it are counted by the authentications metric.
        logger.warn(
          { source, failures: window.failures, windowSeconds: pacingWindowMs / 1000, lastReason: reason },
          "failed authentications paced: this address's refused credentials are answered 429 until its minute ends (AUTH_FAILURES_PER_MINUTE)",
        );
      }
    },
  };
}

/** The address a window counts: IPv4 as is (also when mapped into IPv6), IPv6 by its /64. */
export function sourceOf(address: string | undefined): string {
  if (!address) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (!address.includes(":")) return address;
  const [head = "", tail] = address.split("%")[0]?.split("::") ?? [];
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const full = [...groups(head), ...(tail === undefined ? [] : Array(missing).fill("0")), ...groups(tail)];
  return `${full
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}
