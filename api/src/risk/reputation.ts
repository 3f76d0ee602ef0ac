import { readFileSync } from 'node:fs';
import { parseIp } from '@gatehouse/core/ip';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** Configurable IP reputation: CIDR lists of known-bad sources, hosting/datacenter ranges, and trusted networks. */
export const reputationLists = z
  .object({
    deny: z.array(z.string()).default([]),
    datacenter: z.array(z.string()).default([]),
    allow: z.array(z.string()).default([]),
  })
  .strict();
export type ReputationLists = z.infer<typeof reputationLists>;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function compile(cidrs: string[], where: string): Range[] {
  return cidrs.map((cidr) => {
    try {
      return cidr.includes('/')
        ? ipaddr.parseCIDR(cidr)
        : ([ipaddr.parse(cidr), ipaddr.parse(cidr).kind() === 'ipv4' ? 32 : 128] as Range);
    } catch {
      throw new Error(`${where}: "${cidr}" is not an IP address or CIDR range.`);
    }
  });
}

export class Reputation {
  readonly #deny: Range[];
  readonly #datacenter: Range[];
  readonly #allow: Range[];

  constructor(lists: Partial<ReputationLists> = {}, where = 'reputation lists') {
    const parsed = reputationLists.parse(lists);
    this.#deny = compile(parsed.deny, where);
    this.#datacenter = compile(parsed.datacenter, where);
    this.#allow = compile(parsed.allow, where);
  }

  /** Reads a JSON file `{deny, datacenter, allow}`; throws at start-up with the file named when it is wrong. */
  static fromFile(path: string): Reputation {
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    return new Reputation(raw, path);
  }

  classify(ip: string): 'deny' | 'datacenter' | 'allow' | null {
    const addr = parseIp(ip);
    if (!addr) return null;
    const inAny = (ranges: Range[]) =>
      ranges.some(
        ([net, bits]) => net.kind() === addr.kind() && (addr as ipaddr.IPv4).match(net as ipaddr.IPv4, bits),
      );
    if (inAny(this.#deny)) return 'deny';
    if (inAny(this.#allow)) return 'allow';
    if (inAny(this.#datacenter)) return 'datacenter';
    return null;
  }
}
