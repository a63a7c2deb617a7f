import { BlockList, isIP, SocketAddress } from "node:net";

// Which address ranges a delivery may never reach, and which only when private destinations are
// allowed. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are judged
// by the IPv4 address inside them too, so 64:ff9b::a9fe:a9fe is refused like 169.254.169.254.

export type RangeClass = "refused" | "private";

interface Range {
  list: BlockList;
  what: string;
  class: RangeClass;
}

function range(what: string, rangeClass: RangeClass, cidrs: string[]): Range {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = "", prefix] = cidr.split("/");
    const type = isIP(network) === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) list.addAddress(network, type);
    else list.addSubnet(network, Number(prefix), type);
  }
  return { list, what, class: rangeClass };
}

// Order matters: 100.100.100.200 sits inside the CGNAT range but is a metadata endpoint, and ::1 sits
// inside ::/96, so the narrower entries come first.
const ranges: Range[] = [
  range("a link-local/cloud metadata address", "refused", [
    "169.254.0.0/16",
    "100.100.100.200",
    "192.0.0.192",
    "fe80::/10",
    "fd00:ec2::254",
  ]),
  range("an unspecified address", "refused", ["0.0.0.0/8", "::/128"]),
  range("a loopback address", "private", ["127.0.0.0/8", "::1/128"]),
  range("a private network address", "private", [
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "fc00::/7",
    "fec0::/10",
  ]),
  range("a multicast or broadcast address", "refused", ["224.0.0.0/4", "255.255.255.255", "ff00::/8"]),
  range("a reserved address", "refused", [
    "192.0.0.0/24",
    "192.0.2.0/24",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "240.0.0.0/4",
    "100::/64",
    "2001:db8::/32",
    "2001:10::/28",
    "2001:20::/28",
    // Local-use NAT64 (RFC 8215): where the IPv4 address sits in it depends on the site.
    "64:ff9b:1::/48",
    // IPv4-compatible addresses (deprecated); ::ffff:0:0/96 mapped ones are read below instead.
    "::/96",
  ]),
];

/** The 16 bytes of an IPv6 address (expanded by node's own parser). */
function ipv6Bytes(address: string): Buffer {
  const expanded = new SocketAddress({ address, family: "ipv6" }).address;
  const [head = "", tail = ""] = expanded.includes("::") ? expanded.split("::") : [expanded, ""];
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const toWords = (part: string[]) =>
    part.flatMap((group) => {
      if (!group.includes(".")) return [Number.parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split(".").map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  const headWords = toWords(groups(head));
  const tailWords = toWords(groups(tail));
  const words = [...headWords, ...Array(8 - headWords.length - tailWords.length).fill(0), ...tailWords];
  const bytes = Buffer.alloc(16);
  words.forEach((word, i) => {
    bytes.writeUInt16BE(word, i * 2);
  });
  return bytes;
}

const ipv4At = (bytes: Buffer, offset: number, xor = 0) =>
  [0, 1, 2, 3].map((i) => ((bytes[offset + i] ?? 0) ^ xor).toString()).join(".");

/** IPv4 addresses an IPv6 address carries, with the name of the form that carries them. */
export function embeddedIpv4(address: string): { ipv4: string; form: string }[] {
  const bytes = ipv6Bytes(address);
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  const found: { ipv4: string; form: string }[] = [];
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    found.push({ ipv4: ipv4At(bytes, 12), form: "IPv4-mapped" });
  }
  if (bytes.readUInt32BE(0) === 0x0064ff9b && zeros(4, 12))
    found.push({ ipv4: ipv4At(bytes, 12), form: "NAT64" });
  if (bytes.readUInt16BE(0) === 0x2002) found.push({ ipv4: ipv4At(bytes, 2), form: "6to4" });
  if (bytes.readUInt32BE(0) === 0x20010000) {
    found.push({ ipv4: ipv4At(bytes, 4), form: "Teredo server" });
    found.push({ ipv4: ipv4At(bytes, 12, 0xff), form: "Teredo client" });
  }
  return found;
}

export interface Classification {
  class: RangeClass;
  what: string;
}

/** The range an IP literal falls in (or the IPv4 address it carries), or null for a public address. */
export function classifyAddress(ip: string): Classification | null {
  const family = isIP(ip);
  if (family === 0) return { class: "refused", what: "not an IP address" };
  const type = family === 4 ? "ipv4" : "ipv6";
  const own = ranges.find(({ list }) => list.check(ip, type));
  if (family === 4) return own ? { class: own.class, what: own.what } : null;
  const carried = embeddedIpv4(ip)
    .map(({ ipv4, form }) => {
      const inner = classifyAddress(ipv4);
      return inner && { class: inner.class, what: `${inner.what} (${ipv4}, in ${form} form)` };
    })
    .filter((found): found is Classification => found !== null);
  // The strictest verdict wins: a refused range outranks a private one.
  const verdicts = [...(own ? [{ class: own.class, what: own.what }] : []), ...carried];
  return verdicts.find((v) => v.class === "refused") ?? verdicts[0] ?? null;
}
