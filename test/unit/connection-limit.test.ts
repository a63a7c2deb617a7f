import { describe, expect, it } from "vitest";
import { connectionLimitWithin } from "../../src/http/connection-bounds.js";

describe("the HTTP connection limit within the process's file handles", () => {
  it.each([
    [4096, 20_000, 4096],
    [4096, 6_000, 4096],
    [4096, 4_096, 3072],
    [4096, 1_024, 512],
    [100, 1_024, 100],
    [4096, undefined, 4096],
  ])("HTTP_MAX_CONNECTIONS=%i with %s open files allowed: %i", (configured, fileHandles, limit) => {
    expect(connectionLimitWithin(configured, fileHandles)).toBe(limit);
  });
});
