import { readFileSync } from 'node:fs';
import { type IpRange, parseIp, parseIpRange } from '@gatehouse/core/ip';
import type ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { memoByIp } from './ip-memo.ts';

/** Configurable IP reputation: CIDR lists of known-bad sources, hosting/datacenter ranges, and trusted networks. */
const range = z.string().refine((text) => parseIpRange(text) !== null, 'must be an IP address or CIDR range');

export const reputationLists = z
  .object({
    deny: z.array(range).default([]),
    datacenter: z.array(range).default([]),
    allow: z.array(range).default([]),
  })
  .strict();
export type ReputationLists = z.infer<typeof reputationLists>;

function compile(cidrs: string[], where: string): IpRange[] {
  return cidrs.map((cidr) => {
    const parsed = parseIpRange(cidr);
    if (!parsed) throw new Error(`${where}: "${cidr}" is not an IP address or CIDR range.`);
    return parsed;
  });
}

export class Reputation {
  readonly #deny: IpRange[];
  readonly #datacenter: IpRange[];
  readonly #allow: IpRange[];

  constructor(lists: Partial<ReputationLists> = {}, where = 'reputation lists') {
    const result = reputationLists.safeParse(lists);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const [list, index] = issue.path as [string, number];
      const value = (lists as Record<string, unknown[] | undefined>)[list]?.[index];
      throw new Error(
        typeof value === 'string'
          ? `${where}: "${value}" is not an IP address or CIDR range.`
          : `${where}: ${issue.path.join('.')}: ${issue.message}.`,
      );
    }
    const parsed = result.data;
    this.#deny = compile(parsed.deny, where);
    this.#datacenter = compile(parsed.datacenter, where);
    this.#allow = compile(parsed.allow, where);
  }

  /** Reads a JSON file `{deny, datacenter, allow}`; throws at start-up with the file named when it is wrong. */
  static fromFile(path: string): Reputation {
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    return new Reputation(raw, path);
  }

  /** Which list holds `ip` (deny first, then allow, then datacenter); memoized per address, the lists never change. */
  readonly classify = memoByIp((ip: string) => this.#classify(ip));

  #classify(ip: string): 'deny' | 'datacenter' | 'allow' | null {
    const addr = parseIp(ip);
    if (!addr) return null;
    const inAny = (ranges: IpRange[]) =>
      ranges.some(
        ([net, bits]) => net.kind() === addr.kind() && (addr as ipaddr.IPv4).match(net as ipaddr.IPv4, bits),
      );
    if (inAny(this.#deny)) return 'deny';
    if (inAny(this.#allow)) return 'allow';
    if (inAny(this.#datacenter)) return 'datacenter';
    return null;
  }
}
