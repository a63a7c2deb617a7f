import { describe, expect, it } from "vitest";
import { pauseUntil } from "../../src/delivery-engine/retry-after.js";

// How long a receiver's 429 or 503 with Retry-After pauses its webhook (retry-after.ts): seconds or an
// HTTP date, never longer than the configured cap, and nothing for other statuses or unreadable values.

const now = Date.parse("2026-11-27T12:00:00.000Z");
const hour = 3_600_000;

describe("pauseUntil", () => {
  it.each([
    ["seconds", 429, "120", now + 120_000],
    ["seconds, padded", 503, " 5 ", now + 5_000],
    ["zero seconds", 429, "0", now],
    ["an IMF-fixdate", 503, "Fri, 27 Nov 2026 12:00:30 GMT", now + 30_000],
    ["a date in the past", 429, "Fri, 27 Nov 2026 11:00:00 GMT", now],
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
