import dns from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector } from "undici";

/** Which network destinations an outbound delivery may connect to. */
export type DestinationPolicy = { allowPrivateNetworks: boolean };

/** Thrown (as a connect error) when a delivery would reach an address the policy refuses. */
export class DestinationRefusedError extends Error {
  readonly code = "ERR_DESTINATION_REFUSED";

  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`Destination refused: ${reason}`);
    this.name = "DestinationRefusedError";
  }
}

function blockList(ipv4: string[], ipv6: string[]): BlockList {
  const list = new BlockList();
  for (const [cidrs, type] of [
    [ipv4, "ipv4"],
    [ipv6, "ipv6"],
  ] as const) {
    for (const cidr of cidrs) {
      const [network = "", prefix] = cidr.split("/");
      if (prefix === undefined) list.addAddress(network, type);
      else list.addSubnet(network, Number(prefix), type);
    }
  }
  return list;
}

// A BlockList rule for an IPv4 range also matches the IPv4-mapped IPv6 form (::ffff:169.254.169.254),
// so each range is written once. Order matters: 100.100.100.200 sits inside the CGNAT range but is a
// metadata endpoint, so the always-refused lists are checked first.
const alwaysRefused = [
  {
    list: blockList(["169.254.0.0/16", "100.100.100.200"], ["fe80::/10", "fd00:ec2::254"]),
    what: "a link-local/cloud metadata address",
  },
  { list: blockList(["0.0.0.0/8"], ["::"]), what: "an unspecified address" },
];
const privateOnly = [
  { list: blockList(["127.0.0.0/8"], ["::1"]), what: "a loopback address" },
  {
    list: blockList(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"], ["fc00::/7"]),
    what: "a private network address",
  },
];

/** Why `address` (an IP literal) may not be connected to under `policy`, or null when it may. */
export function refusalReason(address: string, policy: DestinationPolicy): string | null {
  const ip = address.replace(/%.*$/, ""); // an IPv6 zone id (fe80::1%eth0) does not change the range
  const family = isIP(ip);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const { list, what } of alwaysRefused) {
    if (list.check(ip, type)) return `${address} is ${what}`;
  }
  if (policy.allowPrivateNetworks) return null;
  for (const { list, what } of privateOnly) {
    if (list.check(ip, type)) {
      return `${address} is ${what} and private destinations are not allowed (set DELIVERY_ALLOW_PRIVATE_NETWORKS=true to allow them)`;
    }
  }
  return null;
}

function refusal(address: string, policy: DestinationPolicy): DestinationRefusedError | null {
  const reason = refusalReason(address, policy);
  return reason === null ? null : new DestinationRefusedError(address, reason);
}

// net.connect resolves the host through this function and connects to exactly what it returns, so the
// check holds against DNS rebinding. net.connect asks for `all: true` when it races address families
// (autoSelectFamily, the default) and for a single address otherwise; both shapes are answered.
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      for (const { address } of addresses) {
        const refused = refusal(address, policy);
        if (refused) return callback(refused, "");
      }
      const [first] = addresses;
      if (options.all) callback(null, addresses);
      else if (first) callback(null, first.address, first.family);
      else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
    });
  };
}

/**
 * A keep-alive undici Agent that refuses, at connect time, destinations the policy does not allow.
 * Sockets are only ever opened to checked addresses, so reused keep-alive sockets need no re-check.
 */
export function createDeliveryAgent(opts: {
  policy: DestinationPolicy;
  connections?: number;
  keepAliveTimeoutMs?: number;
  connectTimeoutMs?: number;
}): Agent {
  const connectThroughLookup = buildConnector({
    lookup: guardedLookup(opts.policy),
    timeout: opts.connectTimeoutMs ?? 10_000,
  });
  return new Agent({
    connections: opts.connections ?? null,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 4_000,
    // net.connect never calls `lookup` for an IP literal host (http://169.254.169.254/), so literals are
    // checked here. undici has already stripped the brackets of an IPv6 literal from `hostname`.
    connect: (connectOptions, callback) => {
      const refused = isIP(connectOptions.hostname) ? refusal(connectOptions.hostname, opts.policy) : null;
      // Fail asynchronously, like a real connect error: undici's client is not re-entrant here.
      if (refused) process.nextTick(callback, refused, null);
      else connectThroughLookup(connectOptions, callback);
    },
  });
}
