import { BlockList, isIP } from "node:net";

// Behind a proxy or an ingress every connection comes from the proxy, so the client's address (which
// failed authentications are paced by) is the one the proxy puts in X-Forwarded-For. That header is
// believed only from the proxies TRUSTED_PROXIES names: from anyone else it would let a client pick its
// own address, and so escape pacing or have another's address paced.

/** The ranges of TRUSTED_PROXIES (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`); throws naming a bad entry. */
export function trustedProxyRanges(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [network = "", prefix, extra] = entry.split("/");
    const version = isIP(network);
    const bits = Number(prefix);
    const most = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && bits <= most);
    if (version === 0 || !prefixOk || extra !== undefined) {
      throw new Error(`"${entry}" is not an address or a CIDR such as 10.0.0.0/8 or fd00::/8`);
    }
    const type = version === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) list.addAddress(network, type);
    else list.addSubnet(network, bits, type);
  }
  return list;
}

/**
 * Express's `trust proxy` as a function: whether the hop at `address` (the peer first, then each
 * address in X-Forwarded-For from the right) is one of the trusted proxies. req.ip is then the nearest
 * address that is not: the client as the first trusted proxy saw it. An entry that is not an address
 * is never trusted, and so ends the walk.
 */
export function trustProxyIn(ranges: BlockList): (address: string) => boolean {
  return (address) => {
    const plain = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
    const version = isIP(plain);
    if (version === 0) return false;
    return ranges.check(plain, version === 4 ? "ipv4" : "ipv6");
  };
}
