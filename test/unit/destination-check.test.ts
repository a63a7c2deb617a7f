import { describe, expect, it } from "vitest";
import { destinationRefusal, literalDestinationRefusal } from "../../src/webhooks/destination-check.js";

// What the API (403) and the Webhook controller (Ready=False) say about a URL's destination before any
// delivery: the same policy deliveries apply when they connect.

const strict = { allowPrivateNetworks: false };
const open = { allowPrivateNetworks: true };

describe("destination checks of a webhook URL", () => {
  it("judges an IP address at once, and leaves a name to the connection (API)", () => {
    expect(literalDestinationRefusal("http://169.254.169.254/latest", open)).toBe(
      "169.254.169.254 is a link-local/cloud metadata address",
    );
    expect(literalDestinationRefusal("http://[::1]:8080/h", strict)).toMatch(/^::1 is a loopback address/);
    expect(literalDestinationRefusal("http://localhost/h", strict)).toBeNull();
    expect(literalDestinationRefusal("http://127.0.0.1/h", open)).toBeNull();
  });

  it("judges a name by the addresses it resolves to now (Webhook resources)", async () => {
    expect(await destinationRefusal("http://localhost:9/h", strict)).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1) is a loopback address and private destinations are not allowed/,
    );
    expect(await destinationRefusal("http://localhost:9/h", open)).toBeNull();
    expect(await destinationRefusal("http://169.254.169.254/h", open)).toMatch(/metadata/);
    // A name that does not resolve gets no verdict: its deliveries will say why they fail.
    expect(await destinationRefusal("http://no-such-host.invalid/h", strict)).toBeNull();
  });
});
