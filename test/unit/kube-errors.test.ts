import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { describeKubeError, retryAfterMs } from "../../src/operator/kube-errors.js";

const status = JSON.stringify({
  kind: "Status",
  code: 403,
  message: 'secrets is forbidden: User "x" cannot list',
});

describe("describeKubeError", () => {
  it.each([
    [
      "an API error with a Status body",
      new ApiException(403, "HTTP-Code: 403\nBody: …", status, {}),
      'HTTP 403: secrets is forbidden: User "x" cannot list',
    ],
    [
      "an API error with a text body",
      new ApiException(404, "HTTP-Code: 404", "404 page not found\n", {}),
      "HTTP 404: 404 page not found",
    ],
    ["a refused watch", Object.assign(new Error("Gone"), { statusCode: 410 }), "HTTP 410: Gone"],
    [
      "a network error",
      new Error("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) }),
      "fetch failed (ECONNREFUSED)",
    ],
    ["anything else", "boom", "boom"],
  ])("says in one line what failed: %s", (_what, error, line) => {
    expect(describeKubeError(error)).toBe(line);
  });
});

describe("retryAfterMs", () => {
  it.each([
    [new ApiException(429, "", "", { "retry-after": "3" }), 3000],
    [new ApiException(429, "", "", {}), 0],
    [new ApiException(503, "", "", { "retry-after": "soon" }), 0],
    [new Error("other"), 0],
  ])("reads Retry-After seconds (%#)", (error, ms) => {
    expect(retryAfterMs(error)).toBe(ms);
  });
});
