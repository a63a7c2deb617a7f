import dns from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import type { Duplex } from "node:stream";
import { classifyAddress } from "./address-ranges.js";
import { Agent, buildConnector } from "./undici-agent.js";

/**
 * Which network destinations an outbound delivery may connect to. Always refused: metadata, link-local,
 * unspecified, multicast and reserved addresses. Loopback and private ranges only with
 * `allowPrivateNetworks`, or when the admin's allow-list names the address's network or the host name.
 */
export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
  allowed?: AllowList | undefined;
  /**
   * Only what `allowed` names may be reached, public addresses included (DELIVERY_ALLOWED_DESTINATIONS_ONLY).
   * A host name must then be listed itself: one that is not is refused without being looked up.
   */
  onlyAllowed?: boolean;
}

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

export function destinationPolicyOf(config: {
  allowPrivateNetworks: boolean;
  allowedDestinationsOnly?: boolean;
  allowedDestinations: { list: AllowList } | undefined;
}): DestinationPolicy {
  return {
    allowPrivateNetworks: config.allowPrivateNetworks,
    allowed: config.allowedDestinations?.list,
    onlyAllowed: config.allowedDestinationsOnly ?? false,
  };
}

/** An admin's allow-list of private destinations: CIDRs (or single addresses) and host names. */
export interface AllowList {
  networks: BlockList;
  /** Exact names, or suffixes written as `.svc.cluster.local` / `*.svc.cluster.local`. */
  hostnames: string[];
}

/** Parses DELIVERY_ALLOWED_DESTINATIONS entries; throws naming the first entry it cannot read. */
export function parseAllowList(entries: string[]): AllowList {
  const networks = new BlockList();
  const hostnames: string[] = [];
  for (const entry of entries) {
    const [network = "", prefix] = entry.split("/");
    const family = isIP(network);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (family !== 0 && prefix === undefined) networks.addAddress(network, type);
    else if (family !== 0 && /^\d+$/.test(prefix ?? "") && Number(prefix) <= (family === 4 ? 32 : 128)) {
      networks.addSubnet(network, Number(prefix), type);
    } else if (/^(\*?\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(entry)) {
      hostnames.push(entry.replace(/^\*/, "").toLowerCase());
    } else {
      throw new Error(`"${entry}" is neither a CIDR, an IP address nor a host name`);
    }
  }
  return { networks, hostnames };
}

function allowListed(allowed: AllowList | undefined, ip: string, hostname: string | undefined): boolean {
  if (!allowed) return false;
  if (allowed.networks.check(ip, isIP(ip) === 4 ? "ipv4" : "ipv6")) return true;
  return hostname !== undefined && nameListed(allowed, hostname);
}

function nameListed(allowed: AllowList | undefined, hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return (
    allowed?.hostnames.some((entry) => (entry.startsWith(".") ? name.endsWith(entry) : name === entry)) ??
    false
  );
}

const notListed = (destination: string) =>
  `${destination} is not in DELIVERY_ALLOWED_DESTINATIONS, and deliveries may reach only what it names (DELIVERY_ALLOWED_DESTINATIONS_ONLY=true)`;

/**
 * Why a host name may not even be looked up: with onlyAllowed, a name that is not itself listed (its
 * addresses are not asked for). Null otherwise: its addresses are judged once resolved.
 */
export function nameRefusalReason(hostname: string, policy: DestinationPolicy): string | null {
  return policy.onlyAllowed && !nameListed(policy.allowed, hostname) ? notListed(hostname) : null;
}

/**
 * Why `address` (an IP literal, reached through `hostname` when one was resolved) may not be connected
 * to under `policy`, or null when it may.
 */
export function refusalReason(address: string, policy: DestinationPolicy, hostname?: string): string | null {
  const ip = address.replace(/%.*$/, ""); // an IPv6 zone id (fe80::1%eth0) does not change the range
  const range = classifyAddress(ip);
  if (range?.class === "refused") return `${address} is ${range.what}`;
  if (policy.onlyAllowed) return allowListed(policy.allowed, ip, hostname) ? null : notListed(address);
  if (range === null) return null;
  if (policy.allowPrivateNetworks || allowListed(policy.allowed, ip, hostname)) return null;
  return (
    `${address} is ${range.what} and private destinations are not allowed ` +
    "(an admin can allow them with DELIVERY_ALLOWED_DESTINATIONS or DELIVERY_ALLOW_PRIVATE_NETWORKS=true)"
  );
}

function refusal(
  address: string,
  policy: DestinationPolicy,
  hostname?: string,
): DestinationRefusedError | null {
  const reason = refusalReason(address, policy, hostname);
  return reason === null ? null : new DestinationRefusedError(address, reason);
}

// net.connect resolves the host through this function and connects to exactly what it returns, so the
// check holds against DNS rebinding. net.connect asks for `all: true` when it races address families
// (autoSelectFamily, the default) and for a single address otherwise; both shapes are answered.
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const unlisted = nameRefusalReason(hostname, policy);
    if (unlisted) return callback(new DestinationRefusedError(hostname, unlisted), "");
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      for (const { address } of addresses) {
        const refused = refusal(address, policy, hostname);
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
      else
        connectThroughLookup(connectOptions, (error, socket) => {
          if (error || !socket) return callback(error ?? new Error("no socket"), null);
          dropUnaskedContinue(socket);
          callback(null, socket);
        });
    },
  });
}

const continueHead = /^HTTP\/1\.[01] 100 /;
/** "1", the first digit of an interim (1xx) status, at its place in a status line. */
const interimStatusDigit = 0x31;

/**
 * undici fails a request answered by a `100 Continue` it did not ask for (it never sends `Expect:
 * 100-continue`), though a client must accept any 1xx before the final answer (RFC 9110 §15.2): a
 * receiver that sends one and then a 200 was recorded as a connection failure. Such interim heads are
 * taken out of what undici's parser reads from the socket, only in the first bytes read after a request
 * was written, the start of a response. The socket's read is wrapped: a 'readable' listener of our own
 * read every response's first bytes and put them back (unshift) for undici to read again, which cost
 * about 20 µs of CPU per response when requests go one at a time, about 3 µs with 64 at a time.
 */
export function dropUnaskedContinue(socket: Duplex & { bytesWritten: number }): void {
  let writtenAtLastResponse = -1;
  const read = socket.read;
  socket.read = function readPastUnaskedContinue(this: Duplex, size?: number) {
    const chunk: Buffer | null = read.call(this, size);
    if (chunk === null) return chunk;
    // Read once: the getter copies the socket's write buffer to add it up.
    const written = socket.bytesWritten;
    if (written === writtenAtLastResponse) return chunk; // the rest of a response
    writtenAtLastResponse = written;
    let start = 0;
    while (
      chunk[start + 9] === interimStatusDigit &&
      continueHead.test(chunk.toString("latin1", start, start + 13))
    ) {
      const end = chunk.indexOf("\r\n\r\n", start);
      if (end === -1) break;
      start = end + 4;
    }
    if (start === 0) return chunk;
    if (start < chunk.length) return chunk.subarray(start);
    // An interim head alone: the final one is still the start of the response, in bytes not read yet.
    writtenAtLastResponse = -1;
    return socket.read(size);
  };
}
