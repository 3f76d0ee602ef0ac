import ipaddr from 'ipaddr.js';

/** Parses an IPv4 or IPv6 address, turning IPv4-mapped IPv6 (`::ffff:1.2.3.4`) into IPv4. Null when not an IP. */
export function parseIp(value: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (typeof value !== 'string' || value.length > 64 || !ipaddr.isValid(value)) return null;
  try {
    const addr = ipaddr.parse(value);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
      return (addr as ipaddr.IPv6).toIPv4Address();
    }
    return addr;
  } catch {
    return null;
  }
}

export function isIp(value: string): boolean {
  return parseIp(value) !== null;
}

/** Canonical text form of an IP (IPv4-mapped folded to IPv4, IPv6 compressed), or null. */
export function normalizeIp(value: string): string | null {
  return parseIp(value)?.toString() ?? null;
}

/**
 * How two sightings of one user's IP relate. Strict equality rejects real users (dual-stack browsers
 * switch between IPv4 and IPv6, carrier NAT and CDNs rotate within a prefix), so the comparison is by
 * network: the same IPv4 /24 or the same IPv6 /48 counts as a match, and an IPv4/IPv6 pair cannot be
 * compared at all ('unverifiable'), which is not evidence of anything.
 */
export type IpComparison = 'match' | 'mismatch' | 'unverifiable';

export function compareClientIp(solveIp: string, claimedIp: string): IpComparison {
  const a = parseIp(solveIp);
  const b = parseIp(claimedIp);
  if (!a || !b) return 'unverifiable';
  if (a.kind() !== b.kind()) return 'unverifiable';
  const bits = a.kind() === 'ipv4' ? 24 : 48;
  return (a as ipaddr.IPv4).match(b as ipaddr.IPv4, bits) ? 'match' : 'mismatch';
}
