/**
 * Addresses no function ever reaches (unless the operator opts in with `privateDestinations: "allow"`),
 * pure. Checked on every resolved address of every hop.
 *
 * IPv4: this network 0/8, private 10/8 172.16/12 192.168/16, CGNAT 100.64/10, loopback 127/8, link-local
 * 169.254/16 (cloud metadata included), IETF 192.0.0/24, documentation 192.0.2/24 198.51.100/24
 * 203.0.113/24, deprecated 6to4 relays 192.88.99/24, benchmarking 198.18/15, multicast 224/4, reserved
 * 240/4 (broadcast 255.255.255.255 included).
 *
 * IPv6 is allowed only inside global unicast 2000::/3, minus its special blocks, plus the translation
 * prefixes whose embedded IPv4 address is itself allowed (IPv4-mapped ::ffff:0:0/96, IPv4-translated
 * ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32). Everything else — loopback,
 * unspecified, the deprecated IPv4-compatible ::/96, unique-local fc00::/7, link-local fe80::/10, site-local,
 * multicast ff00::/8, discard 100::/64, local-use NAT64 64:ff9b:1::/48 — is forbidden.
 */
import { isIPv4, isIPv6 } from 'node:net';

type Range4 = readonly [base: number, prefix: number];

const FORBIDDEN_V4: readonly Range4[] = [
  [ip4(0, 0, 0, 0), 8],
  [ip4(10, 0, 0, 0), 8],
  [ip4(100, 64, 0, 0), 10],
  [ip4(127, 0, 0, 0), 8],
  [ip4(169, 254, 0, 0), 16],
  [ip4(172, 16, 0, 0), 12],
  [ip4(192, 0, 0, 0), 24],
  [ip4(192, 0, 2, 0), 24],
  [ip4(192, 88, 99, 0), 24],
  [ip4(192, 168, 0, 0), 16],
  [ip4(198, 18, 0, 0), 15],
  [ip4(198, 51, 100, 0), 24],
  [ip4(203, 0, 113, 0), 24],
  [ip4(224, 0, 0, 0), 4],
  [ip4(240, 0, 0, 0), 4],
];

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inRange4(addr: number, [base, prefix]: Range4): boolean {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return ((addr & mask) >>> 0) === base;
}

/** Dotted-quad text to a 32-bit number; the text must already satisfy net.isIPv4. */
function parseIPv4(text: string): number {
  const [a, b, c, d] = text.split('.').map(Number);
  return ip4(a, b, c, d);
}

function isForbiddenV4(addr: number): boolean {
  return FORBIDDEN_V4.some((range) => inRange4(addr, range));
}

/** IPv6 text (already valid per net.isIPv6, zone removed) to eight 16-bit groups. */
function parseIPv6(text: string): number[] {
  let body = text;
  const tail: number[] = [];
  // A trailing dotted quad holds the last two groups.
  const lastColon = body.lastIndexOf(':');
  const maybeV4 = body.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const v4 = parseIPv4(maybeV4);
    tail.push(v4 >>> 16, v4 & 0xffff);
    body = body.slice(0, lastColon + 1);
    // "::1.2.3.4" leaves "::", "a::1.2.3.4" leaves "a::", "a:b:c:d:e:f:1.2.3.4" leaves "a:…:f:".
    if (body.endsWith(':') && !body.endsWith('::')) body = body.slice(0, -1);
  }
  const toGroups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  let groups: number[];
  const gap = body.indexOf('::');
  if (gap >= 0) {
    const head = toGroups(body.slice(0, gap));
    const rest = toGroups(body.slice(gap + 2));
    const zeros = 8 - tail.length - head.length - rest.length;
    groups = [...head, ...new Array<number>(zeros).fill(0), ...rest];
  } else {
    groups = toGroups(body);
  }
  return [...groups, ...tail];
}

/** The 32 bits of groups[i] and groups[i+1] as an IPv4 number. */
function v4At(groups: number[], i: number): number {
  return ((groups[i] << 16) | groups[i + 1]) >>> 0;
}

function isForbiddenV6(g: number[]): boolean {
  const allZero = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);

  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated): judged as the IPv4 address.
  if (allZero(0, 5) && g[5] === 0xffff) return isForbiddenV4(v4At(g, 6));
  if (allZero(0, 4) && g[4] === 0xffff && g[5] === 0) return isForbiddenV4(v4At(g, 6));
  // NAT64 well-known prefix 64:ff9b::/96: the IPv4 destination sits in the last 32 bits.
  if (g[0] === 0x64 && g[1] === 0xff9b && allZero(2, 6)) return isForbiddenV4(v4At(g, 6));
  // Local-use NAT64 64:ff9b:1::/48 never leaves its site.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0x0001) return true;
  // Everything else outside global unicast 2000::/3: ::, ::1, IPv4-compatible ::/96, fc00::/7, fe80::/10,
  // fec0::/10, ff00::/8, 100::/64 and the reserved rest.
  if ((g[0] & 0xe000) !== 0x2000) return true;

  // 6to4 2002::/16: the relay reaches the IPv4 address in bits 16..48.
  if (g[0] === 0x2002) return isForbiddenV4(v4At(g, 1));
  if (g[0] === 0x2001) {
    // Teredo 2001::/32: server IPv4 in bits 32..64, client IPv4 (inverted) in the last 32 bits.
    if (g[1] === 0x0000) return isForbiddenV4(v4At(g, 2)) || isForbiddenV4(~v4At(g, 6) >>> 0);
    // Benchmarking 2001:2::/48.
    if (g[1] === 0x0002 && g[2] === 0x0000) return true;
    // ORCHID 2001:10::/28 and ORCHIDv2 2001:20::/28 are identifiers, not routable.
    if ((g[1] & 0xfff0) === 0x0010 || (g[1] & 0xfff0) === 0x0020) return true;
    // Documentation 2001:db8::/32.
    if (g[1] === 0x0db8) return true;
  }
  // Documentation 3fff::/20 (RFC 9637).
  if ((g[0] & 0xfff0) === 0x3ff0) return true;
  return false;
}

/**
 * True when `ip` (an IPv4 or IPv6 literal, IPv6 optionally in brackets or with a zone) is in a private or
 * reserved range. Text that is not an IP address at all is treated as forbidden: only addresses can be
 * checked, so anything else must not be connected to.
 */
export function isForbiddenAddress(ip: string): boolean {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (isIPv4(text)) return isForbiddenV4(parseIPv4(text));
  if (isIPv6(text)) return isForbiddenV6(parseIPv6(text.toLowerCase()));
  return true;
}
