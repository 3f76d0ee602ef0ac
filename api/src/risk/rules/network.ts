import { parseIp } from '@gatehouse/core/ip';
import { memoByIp } from '../ip-memo.ts';
import type { DatacenterRanges } from '../ranges.ts';
import type { Reputation } from '../reputation.ts';
import type { RiskFinding } from '../signals.ts';
import type { VelocityCounter } from '../velocity.ts';

export interface NetworkThresholds {
  /** Inits per minute from one IP above which points are added (light, heavy). */
  ip: [number, number];
  /** Inits per minute from one /24 (IPv4) or /48 (IPv6). */
  prefix: [number, number];
  /** Inits per minute for the whole app: above it, everyone pays a little more (an attack in progress). */
  app: number;
}

/** The network a user shares with neighbours: /24 for IPv4, /48 for IPv6. */
export const networkPrefix = memoByIp(function networkPrefix(ip: string): string {
  const addr = parseIp(ip);
  if (!addr) return 'invalid';
  if (addr.kind() === 'ipv4') return `${addr.toByteArray().slice(0, 3).join('.')}.0/24`;
  const parts = (addr as import('ipaddr.js').IPv6).parts.slice(0, 3).map((p) => p.toString(16));
  return `${parts.join(':')}::/48`;
});

/**
 * A hosting/datacenter address: enough on its own to leave the invisible tier (BASE_SCORE 10 + 25 = 35, the
 * default `invisible_below`): people browse from homes, offices and phones, scripts from servers.
 */
export const DATACENTER_POINTS = 25;

/**
 * Velocity per IP, per network prefix and per app, the configured reputation lists, and the built-in
 * hosting/datacenter ranges (counted once, and not for an address a list already allows or denies).
 */
export async function networkRules(
  input: { ip: string; appId: string },
  velocity: VelocityCounter,
  reputations: Reputation[],
  thresholds: NetworkThresholds,
  datacenter?: DatacenterRanges,
  now?: number,
): Promise<{ findings: RiskFinding[]; ipRate: number }> {
  const rates = await velocity.hit(velocityKeys(input), now);
  return networkFindings(input.ip, rates, reputations, thresholds, datacenter);
}

/**
 * The velocity counter's keys of an init: its address, its network prefix and its app, in that order.
 * The same array (read-only) for the same app and address, not built anew on every init: a new string's
 * hash is computed again at each map it is looked up in. Bounded like memoByIp.
 */
export function velocityKeys(input: { ip: string; appId: string }): readonly string[] {
  let byIp = keysByApp.get(input.appId);
  if (!byIp) {
    if (keysByApp.size >= MAX_APPS) keysByApp.clear();
    byIp = new Map();
    keysByApp.set(input.appId, byIp);
  }
  let keys = byIp.get(input.ip);
  if (!keys) {
    keys = Object.freeze([
      `ip:${input.appId}:${input.ip}`,
      `net:${input.appId}:${networkPrefix(input.ip)}`,
      `app:${input.appId}`,
    ]);
    if (byIp.size >= MAX_ADDRESSES) byIp.clear();
    byIp.set(input.ip, keys);
  }
  return keys;
}
const keysByApp = new Map<string, Map<string, readonly string[]>>();
const MAX_APPS = 1_000;
const MAX_ADDRESSES = 10_000;

/** networkRules once the rates of `velocityKeys` are counted. */
export function networkFindings(
  ip: string,
  [ipRate = 0, prefixRate = 0, appRate = 0]: number[],
  reputations: Reputation[],
  thresholds: NetworkThresholds,
  datacenter?: DatacenterRanges,
): { findings: RiskFinding[]; ipRate: number } {
  const out: RiskFinding[] = [];
  if (ipRate > thresholds.ip[1]) out.push({ points: 35, reason: 'network.ip_velocity_high' });
  else if (ipRate > thresholds.ip[0]) out.push({ points: 15, reason: 'network.ip_velocity' });
  if (prefixRate > thresholds.prefix[1]) out.push({ points: 25, reason: 'network.prefix_velocity_high' });
  else if (prefixRate > thresholds.prefix[0]) out.push({ points: 10, reason: 'network.prefix_velocity' });
  if (appRate > thresholds.app) out.push({ points: 10, reason: 'network.app_velocity' });

  let listed = false;
  let hosted = false;
  for (const reputation of reputations) {
    const verdict = reputation.classify(ip);
    if (verdict === 'deny') out.push({ points: 60, reason: 'network.deny_list' });
    else if (verdict === 'datacenter') hosted = true;
    else if (verdict === 'allow') out.push({ points: -15, reason: 'network.allow_list' });
    if (verdict === 'deny' || verdict === 'allow') listed = true;
  }
  if (!listed && (hosted || datacenter?.provider(ip) !== undefined))
    out.push({ points: DATACENTER_POINTS, reason: 'network.datacenter' });
  return { findings: out, ipRate };
}
