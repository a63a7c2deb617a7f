import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { retryAfterMs } from "../../src/operator/kube-errors.js";

describe("retryAfterMs", () => {
  it.each([
    ["Retry-After: 3", new ApiException(429, "", "", { "retry-after": "3" }), 3000],
    ["no Retry-After", new ApiException(429, "", "", {}), 0],
    [
      "an HTTP date (not followed)",
      new ApiException(503, "", "", { "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }),
      0,
    ],
    ["not an API error", new Error("other"), 0],
  ])("%s → the delay the server asks for", (_what, error, ms) => {
    expect(retryAfterMs(error)).toBe(ms);
  });
});
