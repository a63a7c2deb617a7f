import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";
import { trustedProxyRanges, trustProxyIn } from "../../src/http/trusted-proxies.js";

describe("TRUSTED_PROXIES", () => {
  const trusted = trustProxyIn(trustedProxyRanges(["10.0.0.0/8", "fd00::/8", "192.0.2.7"]));

  it.each([
    ["10.1.2.3", true],
    ["::ffff:10.1.2.3", true],
    ["fd12::1", true],
    ["192.0.2.7", true],
    ["192.0.2.8", false],
    ["11.0.0.1", false],
    ["fe80::1", false],
    // What a client may write into X-Forwarded-For is never trusted unless it is an address in range.
    ["unknown", false],
    ["", false],
  ])("trusts %s: %s", (address, expected) => {
    expect(trusted(address)).toBe(expected);
  });

  it.each(["10.0.0.0/33", "10.0.0.0/8/1", "fd00::/129", "proxy.local", "10.0.0.0/x"])(
    "refuses %s at start-up, naming it",
    (entry) => {
      expect(() => loadConfig({ TRUSTED_PROXIES: `127.0.0.1,${entry}` })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUSTED_PROXIES: entry })).toThrow(`TRUSTED_PROXIES: "${entry}" is not`);
    },
  );

  it("is off unless set", () => {
    expect(loadConfig({}).http.trustedProxies).toBeUndefined();
    expect(loadConfig({ TRUSTED_PROXIES: " 10.0.0.0/8 , ::1 " }).http.trustedProxies?.entries).toEqual([
      "10.0.0.0/8",
      "::1",
    ]);
  });
});
