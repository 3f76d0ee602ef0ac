import { readFileSync } from 'node:fs';
import { parseIp } from '@gatehouse/core/ip';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { memoByIp } from './ip-memo.ts';

/** Configurable IP reputation: CIDR lists of known-bad sources, hosting/datacenter ranges, and trusted networks. */
/** An IP address or a CIDR range, as `compile` reads it; null when it is neither. */
function parseRange(text: string): Range | null {
  try {
    return text.includes('/')
      ? ipaddr.parseCIDR(text)
      : ([ipaddr.parse(text), ipaddr.parse(text).kind() === 'ipv4' ? 32 : 128] as Range);
  } catch {
    return null;
  }
}

const range = z.string().refine((text) => parseRange(text) !== null, 'must be an IP address or CIDR range');

export const reputationLists = z
  .object({
    deny: z.array(range).default([]),
    datacenter: z.array(range).default([]),
    allow: z.array(range).default([]),
  })
  .strict();
export type ReputationLists = z.infer<typeof reputationLists>;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function compile(cidrs: string[], where: string): Range[] {
  return cidrs.map((cidr) => {
    const parsed = parseRange(cidr);
    if (!parsed) throw new Error(`${where}: "${cidr}" is not an IP address or CIDR range.`);
    return parsed;
  });
}

export class Reputation {
  readonly #deny: Range[];
  readonly #datacenter: Range[];
  readonly #allow: Range[];

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
