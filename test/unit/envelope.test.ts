import { describe, expect, it } from "vitest";
import { createEnvelope, uuidV7 } from "../../src/formats/envelope.js";

const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timeOf = (id: string) => Number.parseInt(id.replace("-", "").slice(0, 12), 16);

describe("event ids", () => {
  it("are UUIDv7s carrying the event's time in milliseconds", () => {
    const envelope = createEnvelope("deployment.created", 1, {}, new Date("2026-11-25T02:03:04.567Z"));
    expect(envelope.id).toMatch(v7);
    expect(timeOf(envelope.id)).toBe(Date.parse(envelope.timestamp));
    // The earliest and latest times 48 bits hold keep their width.
    expect(uuidV7(new Date(0))).toMatch(/^00000000-0000-7/);
    expect(uuidV7(new Date(2 ** 48 - 1))).toMatch(/^ffffffff-ffff-7/);
  });

  it("sort by time and are unique within one millisecond", () => {
    const start = Date.parse("2026-11-25T00:00:00Z");
    const ordered = Array.from({ length: 1_000 }, (_, i) => uuidV7(new Date(start + i)));
    expect([...ordered].sort()).toEqual(ordered);
    const sameMs = Array.from({ length: 10_000 }, () => uuidV7(new Date(start)));
    expect(new Set(sameMs).size).toBe(sameMs.length);
    for (const id of sameMs) expect(id).toMatch(v7);
    expect(sameMs.every((id) => timeOf(id) === start)).toBe(true);
  });
});
