import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { GatehouseError } from './errors.ts';

/**
 * Parses an IPv4 or IPv6 address, turning IPv4-mapped IPv6 (`::ffff:1.2.3.4`) into IPv4. Null when not an IP.
 * Only the standard text forms count: ipaddr.js alone also takes `1`, `10.1`, octal and hex parts
 * (`010.0.0.1` is 8.0.0.1) and zone ids, none of which names a client address.
 */
export function parseIp(value: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (typeof value !== 'string' || value.length > 64 || !isStandardForm(value)) return null;
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

/** Dotted-quad decimal IPv4, or IPv6 without a zone whose embedded IPv4 part (if any) is dotted-quad decimal. */
function isStandardForm(value: string): boolean {
  if (ipaddr.IPv4.isValidFourPartDecimal(value)) return true;
  if (value.includes('%') || !ipaddr.IPv6.isValid(value)) return false;
  const tail = value.slice(value.lastIndexOf(':') + 1);
  return !tail.includes('.') || ipaddr.IPv4.isValidFourPartDecimal(tail);
}

/** An address range: an address and its prefix length (32 or 128 for a single address). */
export type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * A single address or a CIDR range (`10.0.0.0/8`, `2001:db8::/32`), the address in the standard text forms
 * parseIp takes (an IPv4-mapped IPv6 range is written as the IPv4 range); null when it is neither.
 */
export function parseIpRange(text: string): IpRange | null {
  const slash = text.indexOf('/');
  const address = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!address) return null;
  const whole = address.kind() === 'ipv4' ? 32 : 128;
  if (slash < 0) return [address, whole];
  const bits = text.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= whole ? [address, Number(bits)] : null;
}

export function isIp(value: string): boolean {
  return parseIp(value) !== null;
}

/**
 * An IP address in a request body, as parseIp takes it; its JSON Schema says the same through the ipv4 and
 * ipv6 formats, so the OpenAPI document refuses what the server refuses (an empty string included).
 */
export const ipAddressSchema = z
  .string()
  .refine(isIp, 'must be an IPv4 or IPv6 address')
  .meta({
    description: 'An IPv4 (dotted decimal) or IPv6 address.',
    anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }],
  });

/** Canonical text form of an IP (IPv4-mapped folded to IPv4, IPv6 compressed), or null. */
export function normalizeIp(value: string): string | null {
  return parseIp(value)?.toString() ?? null;
}

/**
 * The client an address stands for, in per-client limits and counts: an IPv4 address itself (an office behind NAT
 * is one address already), an IPv6 address's /64, the smallest prefix an ISP delegates to one subscriber. Keyed
 * by the full IPv6 address, a script picks a new interface id for every request and is never counted twice.
 * Anything that is not an IP comes back as it was.
 */
export function clientKey(ip: string): string {
  const addr = parseIp(ip);
  if (!addr) return ip;
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${Buffer.from(addr.toByteArray().slice(0, 8)).toString('hex')}/64`;
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

/**
 * Applies an app's `client_ip_policy` to a verdict: the comparison is always reported; under `reject` a
 * mismatch is the `client_ip_mismatch` verdict (an error envelope with `data.valid: false`, so the code
 * reaches readers of `data.error`). Nothing happens without a client IP.
 */
export function applyClientIpPolicy<V extends { action: string; client_ip_check?: IpComparison }>(
  verdict: V,
  solveIp: string,
  clientIp: string | undefined,
  policy: string,
): V {
  if (clientIp === undefined) return verdict;
  verdict.client_ip_check = compareClientIp(solveIp, clientIp);
  if (verdict.client_ip_check === 'mismatch' && policy === 'reject') {
    throw new GatehouseError(
      'client_ip_mismatch',
      undefined,
      {},
      {
        action: verdict.action,
        client_ip_check: 'mismatch',
        reason: 'client_ip_mismatch',
      },
    );
  }
  return verdict;
}
