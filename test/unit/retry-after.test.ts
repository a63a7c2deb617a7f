import { describe, expect, it } from "vitest";
import { PauseRuns, pausesBeforeAttempts, pauseUntil } from "../../src/delivery-engine/retry-after.js";

// How long a receiver's 429 or 503 with Retry-After pauses its webhook (retry-after.ts): seconds or an
// HTTP date, never shorter than a second nor longer than the configured cap, and nothing for other
// statuses or unreadable values; and how long a run of pauses may last (PauseRuns).

const now = Date.parse("2026-11-27T12:00:00.000Z");
const hour = 3_600_000;

describe("pauseUntil", () => {
  it.each([
    ["seconds", 429, "120", now + 120_000],
    ["seconds, padded", 503, " 5 ", now + 5_000],
    ["zero seconds, as the shortest pause", 429, "0", now + 1_000],
    ["an IMF-fixdate", 503, "Fri, 27 Nov 2026 12:00:30 GMT", now + 30_000],
    ["a date in the past, as the shortest pause", 429, "Fri, 27 Nov 2026 11:00:00 GMT", now + 1_000],
    ["a date this instant, as the shortest pause", 503, "Fri, 27 Nov 2026 12:00:00 GMT", now + 1_000],
    ["a year of seconds, cut to the cap", 429, "31536000", now + hour],
    ["a date a year ahead, cut to the cap", 503, "Sat, 27 Nov 2027 12:00:00 GMT", now + hour],
  ])("reads %s", (_name, statusCode, retryAfter, expected) => {
    expect(pauseUntil({ statusCode, retryAfter }, now, hour)).toBe(expected);
  });

  it.each([
    ["no header", 429, undefined],
    ["another status", 500, "10"],
    ["a success", 200, "10"],
    ["a negative number", 429, "-5"],
    ["a fraction", 429, "1.5"],
    ["words", 503, "soon"],
  ])("asks for no pause with %s", (_name, statusCode, retryAfter) => {
    const outcome = retryAfter === undefined ? { statusCode } : { statusCode, retryAfter };
    expect(pauseUntil(outcome, now, hour)).toBeUndefined();
  });
});

describe("pauseUntil with a cap of 0", () => {
  it("still pauses for the shortest pause: a cap cannot make a loop", () => {
    expect(pauseUntil({ statusCode: 429, retryAfter: "30" }, now, 0)).toBe(now + 1_000);
  });
});

describe("PauseRuns", () => {
  it(`grants ${pausesBeforeAttempts} pauses in a row, then none until the receiver answers otherwise`, () => {
    const runs = new PauseRuns();
    const granted = Array.from({ length: pausesBeforeAttempts + 2 }, () => runs.grant(7, false));
    expect(granted).toEqual([...Array(pausesBeforeAttempts).fill(true), false, false]);
    // Another webhook's run is its own.
    expect(runs.grant(8, false)).toBe(true);
    runs.ended(7);
    expect(runs.grant(7, false)).toBe(true);
  });

  it("does not lengthen a run with answers that come while its pause is in force", () => {
    const runs = new PauseRuns();
    for (let i = 0; i < pausesBeforeAttempts - 1; i += 1) runs.grant(7, false);
    expect([runs.grant(7, true), runs.grant(7, true), runs.grant(7, false)]).toEqual([true, true, true]);
    expect(runs.grant(7, false)).toBe(false);
  });
});
