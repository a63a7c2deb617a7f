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
    ["fec0::1", false, false],
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
      "10.0.0.5 is a private network address and private destinations are not allowed (set DELIVERY_ALLOW_PRIVATE_NETWORKS=true to allow them)",
    );
    expect(refusalReason("::1", strict)).toMatch(/^::1 is a loopback address and private destinations/);
    expect(refusalReason("0.0.0.0", permissive)).toBe("0.0.0.0 is an unspecified address");
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
