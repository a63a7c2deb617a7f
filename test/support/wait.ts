import { inspect } from "node:util";

export interface WaitOptions {
  /** How long to keep trying. Bound it by what is awaited, generously: a loaded machine only slows it. */
  timeoutMs?: number;
  /** The pause between two checks. */
  intervalMs?: number;
}

/**
 * The tests' one polling loop: calls `check` until it gives something other than undefined. `check`
 * may tell what it saw (`saw(x)`) each time it is not yet satisfied, so that a time-out names both what
 * was awaited and the last thing seen, instead of a bare "condition not met".
 */
export async function waitUntil<T>(
  what: string,
  check: (saw: (seen: unknown) => void) => Promise<T | undefined>,
  { timeoutMs = 10_000, intervalMs = 20 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let seen: { value: unknown } | undefined;
  const saw = (value: unknown) => {
    seen = { value };
  };
  for (;;) {
    const value = await check(saw);
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const last = seen ? `; last seen: ${inspect(seen.value, { depth: 4, breakLength: 120 })}` : "";
      throw new Error(`waited ${Math.round(timeoutMs / 1000)} s for ${what}${last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
