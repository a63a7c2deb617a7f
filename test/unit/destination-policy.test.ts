import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { setImmediate } from "node:timers/promises";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDeliveryAgent,
  DestinationRefusedError,
  guardedLookup,
  parseAllowList,
  refusalReason,
} from "../../src/delivery-engine/destination-policy.js";

const strict = { allowPrivateNetworks: false };
const permissive = { allowPrivateNetworks: true };

describe("refusalReason", () => {
  // [address, refused with private networks disallowed, refused with them allowed]
  const table: [string, boolean, boolean][] = [
    ["169.254.169.254", true, true],
    ["169.254.0.1", true, true],
    ["100.100.100.200", true, true],
    ["fe80::1", true, true],
    ["FEBF::1", true, true],
    ["fe80::1%eth0", true, true],
    ["fd00:ec2::254", true, true],
    ["::ffff:169.254.169.254", true, true],
    ["::ffff:a9fe:a9fe", true, true],
    ["0.0.0.0", true, true],
    ["::", true, true],
    ["0:0:0:0:0:0:0:0", true, true],
    ["not-an-ip", true, true],
    ["127.0.0.1", true, false],
    ["127.255.255.254", true, false],
    ["::1", true, false],
    ["::ffff:127.0.0.1", true, false],
    ["10.0.0.5", true, false],
    ["172.16.0.1", true, false],
    ["172.31.255.255", true, false],
    ["192.168.1.1", true, false],
    ["100.64.0.1", true, false],
    ["100.127.255.255", true, false],
    ["fc00::1", true, false],
    ["fd12:3456::1", true, false],
    ["::ffff:10.0.0.5", true, false],
    ["8.8.8.8", false, false],
    ["172.15.255.255", false, false],
    ["172.32.0.1", false, false],
    ["100.63.255.255", false, false],
    ["100.128.0.1", false, false],
    ["169.253.255.255", false, false],
    ["fec0::1", true, false],
    // Added ranges: reserved, multicast, benchmark, protocol assignments, documentation.
    ["0.1.2.3", true, true],
    ["192.0.0.192", true, true],
    ["192.0.0.8", true, true],
    ["192.0.2.1", true, true],
    ["198.18.0.1", true, true],
    ["198.19.255.255", true, true],
    ["198.51.100.7", true, true],
    ["203.0.113.9", true, true],
    ["224.0.0.1", true, true],
    ["239.255.255.250", true, true],
    ["240.0.0.1", true, true],
    ["255.255.255.255", true, true],
    ["ff02::1", true, true],
    ["FF05::2", true, true],
    ["100::1", true, true],
    ["2001:db8::1", true, true],
    ["::a9fe:a9fe", true, true],
    ["::10.0.0.1", true, true],
    ["64:ff9b:1::a", true, true],
    // IPv4 carried inside IPv6: judged by the IPv4 address.
    ["64:ff9b::a9fe:a9fe", true, true],
    ["64:ff9b::169.254.169.254", true, true],
    ["64:ff9b::7f00:1", true, false],
    ["64:ff9b::a00:5", true, false],
    ["64:ff9b::808:808", false, false],
    ["2002:a9fe:a9fe::1", true, true],
    ["2002:7f00:1::", true, false],
    ["2002:c0a8:101::1", true, false],
    ["2002:808:808::1", false, false],
    ["2001:0:4136:e378:8000:63bf:5601:5601", true, true], // Teredo client 169.254.169.254 (bits inverted)
    ["2001:0:a9fe:a9fe::1", true, true], // Teredo server 169.254.169.254
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", false, false], // Teredo client 8.8.8.8
    ["::ffff:0:a9fe:a9fe", false, false], // SIIT "IPv4-translated" form is not a special range
    ["::ffff:a00:5", true, false],
    ["2001:4860:4860::8888", false, false],
    ["::ffff:8.8.8.8", false, false],
  ];

  it.each(table)(
    "%s: refused strict=%s, refused permissive=%s",
    (address, strictRefused, permissiveRefused) => {
      expect(refusalReason(address, strict) !== null).toBe(strictRefused);
      expect(refusalReason(address, permissive) !== null).toBe(permissiveRefused);
    },
  );

  it("explains the refusal in words", () => {
    expect(refusalReason("169.254.169.254", permissive)).toBe(
      "169.254.169.254 is a link-local/cloud metadata address",
    );
    expect(refusalReason("10.0.0.5", strict)).toBe(
      "10.0.0.5 is a private network address and private destinations are not allowed (an admin can allow them with DELIVERY_ALLOWED_DESTINATIONS or DELIVERY_ALLOW_PRIVATE_NETWORKS=true)",
    );
    expect(refusalReason("64:ff9b::a9fe:a9fe", strict)).toBe(
      "64:ff9b::a9fe:a9fe is a link-local/cloud metadata address (169.254.169.254, in NAT64 form)",
    );
    expect(refusalReason("::1", strict)).toMatch(/^::1 is a loopback address and private destinations/);
    expect(refusalReason("0.0.0.0", permissive)).toBe("0.0.0.0 is an unspecified address");
  });
});

describe("the admin's allow-list", () => {
  const policy = {
    allowPrivateNetworks: false,
    allowed: parseAllowList([
      "10.96.0.0/12",
      "192.168.7.7",
      "fd00:1::/64",
      ".svc.cluster.local",
      "db.internal",
    ]),
  };

  it.each([
    ["10.100.0.1", undefined, null],
    ["192.168.7.7", undefined, null],
    ["fd00:1::9", undefined, null],
    ["10.0.0.1", "hooks.team-a.svc.cluster.local", null],
    ["10.0.0.1", "DB.Internal.", null],
    ["10.0.0.1", undefined, /private network address/],
    ["192.168.7.8", undefined, /private network address/],
    ["10.0.0.1", "svc.cluster.local.evil.example", /private network address/],
    ["10.0.0.1", "notdb.internal", /private network address/],
    ["169.254.169.254", "metadata.svc.cluster.local", /metadata/],
  ])("%s reached as %s: %s", (address, hostname, expected) => {
    const reason = refusalReason(address, policy, hostname);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toMatch(expected);
  });

  it.each(["10.0.0.0/33", "not a host", "http://x", "fd00::/129", "10.0.0.0/abc"])(
    "refuses the entry %j",
    (entry) => {
      expect(() => parseAllowList([entry])).toThrow(
        `"${entry}" is neither a CIDR, an IP address nor a host name`,
      );
    },
  );
});

describe("an allow-list that is the only way out (DELIVERY_ALLOWED_DESTINATIONS_ONLY)", () => {
  const only = {
    allowPrivateNetworks: true, // ignored: only what the list names
    allowed: parseAllowList(["127.77.0.1", "hooks.example.com"]),
    onlyAllowed: true,
  };

  it.each([
    ["127.77.0.1", undefined, null],
    ["93.184.216.34", "hooks.example.com", null],
    ["127.0.0.1", undefined, /^127\.0\.0\.1 is not in DELIVERY_ALLOWED_DESTINATIONS/],
    ["93.184.216.34", undefined, /^93\.184\.216\.34 is not in DELIVERY_ALLOWED_DESTINATIONS/],
    ["169.254.169.254", "hooks.example.com", /metadata/],
  ])("%s reached as %s: %s", (address, hostname, expected) => {
    const reason = refusalReason(address, only, hostname);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toMatch(expected);
  });

  it("refuses a name it does not list without looking it up", async () => {
    const lookup = guardedLookup(only);
    const error = await new Promise((resolve) => lookup("invented.example", {}, (err) => resolve(err)));
    expect(error).toBeInstanceOf(DestinationRefusedError);
    expect((error as DestinationRefusedError).reason).toBe(
      "invented.example is not in DELIVERY_ALLOWED_DESTINATIONS, and deliveries may reach only what it names (DELIVERY_ALLOWED_DESTINATIONS_ONLY=true)",
    );
  });
});

describe("delivery agent", () => {
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end("reached"));
    server.on("connection", () => connections++);
    // No host: dual-stack where IPv6 exists, so `localhost` works whichever address it resolves to.
    server.listen(0);
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  async function refusalOf(url: string, policy = strict): Promise<DestinationRefusedError> {
    const agent = createDeliveryAgent({ policy });
    try {
      const err = await request(url, { dispatcher: agent }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DestinationRefusedError);
      return err as DestinationRefusedError;
    } finally {
      await agent.close();
    }
  }

  it("refuses IP literals, which net.connect never passes to lookup", async () => {
    const before = connections;
    const loopback = await refusalOf(`http://127.0.0.1:${port}/`);
    expect(loopback.address).toBe("127.0.0.1");
    expect(loopback.reason).toMatch(/^127\.0\.0\.1 is a loopback address/);
    expect(connections).toBe(before);

    const metadata = await refusalOf("http://169.254.169.254/latest/meta-data/", permissive);
    expect(metadata.reason).toBe("169.254.169.254 is a link-local/cloud metadata address");
    const mapped = await refusalOf("http://[::ffff:169.254.169.254]/", permissive);
    expect(mapped.reason).toMatch(/is a link-local\/cloud metadata address$/);
    expect((await refusalOf("http://[::1]:1/")).address).toBe("::1");
  });

  it("refuses hostnames that resolve to a refused address", async () => {
    const before = connections;
    const err = await refusalOf(`http://localhost:${port}/`);
    expect(["127.0.0.1", "::1"]).toContain(err.address);
    expect(connections).toBe(before);
    // tls.connect hands `lookup` on to the TCP socket, so https URLs are checked the same way.
    expect((await refusalOf("https://localhost:1/")).reason).toMatch(/is a loopback address/);
    expect((await refusalOf("https://127.0.0.1:1/")).address).toBe("127.0.0.1");
  });

  it("connects to private addresses when they are allowed, reusing the socket", async () => {
    const agent = createDeliveryAgent({ policy: permissive });
    const before = connections;
    for (let i = 0; i < 2; i++) {
      const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe("reached");
      await setImmediate(); // undici's Pool sees the connection free one turn after the body ends
    }
    expect(connections - before).toBe(1);
    const viaName = await request(`http://localhost:${port}/`, { dispatcher: agent });
    expect(await viaName.body.text()).toBe("reached");
    await agent.close();
  });

  it("answers both lookup call shapes of net.connect", async () => {
    for (const autoSelectFamily of [true, false]) {
      const socket = connect({ host: "localhost", port, lookup: guardedLookup(strict), autoSelectFamily });
      const [err] = await once(socket, "error");
      expect(err).toBeInstanceOf(DestinationRefusedError);

      const allowed = connect({
        host: "localhost",
        port,
        lookup: guardedLookup(permissive),
        autoSelectFamily,
      });
      await once(allowed, "connect");
      expect(["127.0.0.1", "::1", "::ffff:127.0.0.1"]).toContain(allowed.remoteAddress);
      allowed.destroy();
    }
  });
});
