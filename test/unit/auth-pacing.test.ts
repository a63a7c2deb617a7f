import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createAuthPacer, pacedSourcesLimit, sourceOf } from "../../src/api-keys/auth-pacing.js";

/** A pacer on a clock the test moves, and the log lines it writes. */
function pacerWithLog(limit: number) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const clock = { now: 1_000_000 };
  const pacer = createAuthPacer(limit, pino({ level: "info" }, stream), () => clock.now);
  return { pacer, lines, clock };
}

describe("failed-authentication pacing", () => {
  it("paces a source at its limit until its minute ends, and logs it once, never the credential", () => {
    const { pacer, lines, clock } = pacerWithLog(3);
    for (let i = 0; i < 2; i++) pacer.failed("10.0.0.1", "Invalid API key.");
    expect(pacer.refusal("10.0.0.1")?.retryAfterSeconds).toBeUndefined();
    pacer.failed("10.0.0.1", "Invalid API key.");
    clock.now += 20_000;
    expect(pacer.refusal("10.0.0.1")?.retryAfterSeconds).toBe(40);
    // Others are not paced, and more failures of the paced one add no line.
    expect(pacer.refusal("10.0.0.2")?.retryAfterSeconds).toBeUndefined();
    pacer.failed("10.0.0.1", "Invalid API key.");
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        source: "10.0.0.1",
        failures: 3,
        windowSeconds: 60,
        lastReason: "Invalid API key.",
      }),
    ]);
    clock.now += 40_000;
    expect(pacer.refusal("10.0.0.1")?.retryAfterSeconds).toBeUndefined();
    // A new episode, a new line.
    for (let i = 0; i < 3; i++) pacer.failed("10.0.0.1", "Invalid API key.");
    expect(lines).toHaveLength(2);
  });

  it("counts an IPv6 source by its /64 and an IPv4-mapped one as IPv4", () => {
    expect(sourceOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(sourceOf("2001:db8:1:2:ffff:1:2:3")).toBe("2001:db8:1:2::/64");
    expect(sourceOf("2001:db8::5")).toBe("2001:db8:0:0::/64");
    expect(sourceOf("::1")).toBe("0:0:0:0::/64");
    expect(sourceOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(sourceOf("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(sourceOf("192.0.2.7")).toBe("192.0.2.7");
    const { pacer } = pacerWithLog(2);
    pacer.failed("2001:db8:1:2::a", "Invalid API key.");
    pacer.failed("2001:db8:1:2::b", "Invalid API key.");
    expect(pacer.refusal("2001:db8:1:2::c")?.retryAfterSeconds).toBe(60);
    expect(pacer.refusal("2001:db8:1:3::a")?.retryAfterSeconds).toBeUndefined();
  });

  it("remembers a bounded number of sources, the most recently failing", () => {
    const { pacer } = pacerWithLog(1);
    pacer.failed("10.9.9.9", "Invalid API key.");
    for (let i = 0; i < pacedSourcesLimit; i++)
      pacer.failed(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, "x");
    expect(pacer.refusal("10.9.9.9")?.retryAfterSeconds).toBeUndefined();
    expect(pacer.refusal("10.0.0.0")?.retryAfterSeconds).toBe(60);
  });

  it("does nothing with a limit of 0", () => {
    const { pacer, lines } = pacerWithLog(0);
    for (let i = 0; i < 100; i++) pacer.failed("10.0.0.1", "Invalid API key.");
    expect(pacer.refusal("10.0.0.1")?.retryAfterSeconds).toBeUndefined();
    expect(lines).toEqual([]);
  });
});
