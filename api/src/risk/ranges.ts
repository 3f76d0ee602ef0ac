import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseIp } from '@gatehouse/core/ip';
import ipaddr from 'ipaddr.js';
import { memoByIp } from './ip-memo.ts';

/** An address as an unsigned integer: 32 bits for IPv4, 128 for IPv6. */
function toBigInt(addr: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  let n = 0n;
  for (const byte of addr.toByteArray()) n = (n << 8n) | BigInt(byte);
  return n;
}

/** One inclusive range of one family, with the index of what it belongs to (a provider, a list). */
export interface Interval {
  v6: boolean;
  start: bigint;
  end: bigint;
  tag: number;
}

/**
 * Inclusive address ranges sorted by start and made disjoint (where two overlap, the one starting first
 * keeps the overlap), looked up by binary search: O(log n) per address whatever the size of the lists.
 * IPv4 lives in typed arrays; IPv6 in bigint arrays.
 */
export class RangeTable {
  readonly #v4start: Uint32Array;
  readonly #v4end: Uint32Array;
  readonly #v4tag: Uint16Array;
  readonly #v6start: bigint[];
  readonly #v6end: bigint[];
  readonly #v6tag: number[];
  readonly size: number;

  constructor(intervals: Interval[]) {
    const v4 = disjoint(intervals.filter((i) => !i.v6));
    const v6 = disjoint(intervals.filter((i) => i.v6));
    this.#v4start = Uint32Array.from(v4, (i) => Number(i.start));
    this.#v4end = Uint32Array.from(v4, (i) => Number(i.end));
    this.#v4tag = Uint16Array.from(v4, (i) => i.tag);
    this.#v6start = v6.map((i) => i.start);
    this.#v6end = v6.map((i) => i.end);
    this.#v6tag = v6.map((i) => i.tag);
    this.size = v4.length + v6.length;
  }

  /** The tag of the range holding `ip` (IPv4-mapped IPv6 counts as IPv4), or undefined. */
  lookup(ip: string): number | undefined {
    const addr = parseIp(ip);
    if (!addr) return undefined;
    const n = toBigInt(addr);
    if (addr.kind() === 'ipv4') {
      const i = lastAtOrBelow(this.#v4start, Number(n));
      return i >= 0 && Number(n) <= (this.#v4end[i] as number) ? this.#v4tag[i] : undefined;
    }
    const i = lastAtOrBelow(this.#v6start, n);
    return i >= 0 && n <= (this.#v6end[i] as bigint) ? this.#v6tag[i] : undefined;
  }
}

/** Index of the last element <= value in an ascending array, or -1. */
function lastAtOrBelow<T extends number | bigint>(sorted: ArrayLike<T>, value: T): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as T) <= value) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Sorts and clips intervals so none overlap (the one starting first, then the one listed first, keeps the
 * overlap), and joins touching or overlapping intervals of the same tag.
 */
export function disjoint(intervals: Interval[]): Interval[] {
  const order = intervals.map((interval, rank) => ({ ...interval, rank }));
  order.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.rank - b.rank));
  const out: Interval[] = [];
  for (const next of order) {
    const last = out[out.length - 1];
    let start = next.start;
    if (last && start <= last.end) {
      if (next.end <= last.end) continue;
      start = last.end + 1n;
    }
    if (last && last.tag === next.tag && last.end + 1n >= start) last.end = next.end;
    else out.push({ v6: next.v6, start, end: next.end, tag: next.tag });
  }
  return out;
}

/** Parses "a.b.c.d/len", "x::/len", a single address, or "start-end" into an interval. Null if invalid. */
export function parseInterval(text: string, tag: number): Interval | null {
  const dash = text.indexOf('-');
  if (dash > 0) {
    const a = parseIp(text.slice(0, dash).trim());
    const b = parseIp(text.slice(dash + 1).trim());
    if (!a || !b || a.kind() !== b.kind()) return null;
    const start = toBigInt(a);
    const end = toBigInt(b);
    return start <= end ? { v6: a.kind() === 'ipv6', start, end, tag } : null;
  }
  const [host, bitsText] = text.trim().split('/');
  const addr = parseIp(host ?? '');
  if (!addr) return null;
  const width = addr.kind() === 'ipv4' ? 32 : 128;
  const bits = bitsText === undefined ? width : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > width || !/^\d*$/.test(bitsText ?? '')) return null;
  const span = (1n << BigInt(width - bits)) - 1n;
  const start = toBigInt(addr) & ~span & ((1n << BigInt(width)) - 1n);
  return { v6: addr.kind() === 'ipv6', start, end: start + span, tag };
}

/** The built-in hosting/datacenter ranges: which provider an address belongs to. */
export interface DatacenterRanges {
  table: RangeTable;
  providers: string[];
  /** The data file's header: when and from what it was generated. */
  about: string[];
  provider(ip: string): string | undefined;
}

/** Where the committed data file lives (written by api/scripts/refresh-datacenter-ranges.ts). */
export const DATACENTER_RANGES_FILE = join(import.meta.dirname, 'datacenter-ranges.txt');

/**
 * Reads a ranges file: `#` comment lines (kept as `about`), `provider,<index>,<name>` lines, then
 * `<start>,<end>,<provider index>` lines of inclusive address ranges (IPv4 or IPv6 text).
 */
export function loadDatacenterRanges(path = DATACENTER_RANGES_FILE): DatacenterRanges {
  let found = loaded.get(path);
  if (!found) {
    found = readRanges(path);
    loaded.set(path, found);
  }
  return found;
}

/** Read once per process (a test process starts many servers); the table is immutable. */
const loaded = new Map<string, DatacenterRanges>();

/** The file's own addresses, written by intervalText: plain dotted quads, or IPv6 text for ipaddr.js. */
function fileAddress(text: string): { v6: boolean; n: bigint } | null {
  if (!text.includes(':')) {
    const parts = text.split('.');
    if (parts.length !== 4) return null;
    let n = 0;
    for (const part of parts) {
      const byte = Number(part);
      if (!Number.isInteger(byte) || byte < 0 || byte > 255 || part === '') return null;
      n = n * 256 + byte;
    }
    return { v6: false, n: BigInt(n) };
  }
  try {
    return { v6: true, n: toBigInt(ipaddr.IPv6.parse(text)) };
  } catch {
    return null;
  }
}

function readRanges(path: string): DatacenterRanges {
  const about: string[] = [];
  const providers: string[] = [];
  const intervals: Interval[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line === '') return;
    if (line.startsWith('#')) {
      about.push(line.slice(1).trim());
      return;
    }
    const [a = '', b = '', ...rest] = line.split(',');
    const c = rest.join(',');
    if (a === 'provider') {
      providers[Number(b)] = c;
      return;
    }
    const start = fileAddress(a);
    const end = fileAddress(b);
    const tag = Number(c);
    if (!start || !end || start.v6 !== end.v6 || start.n > end.n || providers[tag] === undefined)
      throw new Error(`${path}:${i + 1}: not a range of a known provider: "${line}"`);
    intervals.push({ v6: start.v6, start: start.n, end: end.n, tag });
  });
  const table = new RangeTable(intervals);
  // Memoized per address: the risk engine asks on every init, mostly for addresses it saw a moment ago.
  const provider = memoByIp((ip) => {
    const tag = table.lookup(ip);
    return tag === undefined ? undefined : providers[tag];
  });
  return { table, providers, about, provider };
}

/** Formats an interval's ends back to text (the refresh script writes them). */
export function intervalText(interval: Interval): [string, string] {
  const text = (n: bigint) => {
    const bytes: number[] = [];
    for (let i = interval.v6 ? 15 : 3; i >= 0; i--) bytes.push(Number((n >> BigInt(i * 8)) & 255n));
    return ipaddr.fromByteArray(bytes).toString();
  };
  return [text(interval.start), text(interval.end)];
}

/** The ranges RISK_DATACENTER_RANGES names: the committed file (default), another file, or none. */
export function datacenterRanges(
  setting: 'builtin' | 'off' | { file: string },
): DatacenterRanges | undefined {
  if (setting === 'off') return undefined;
  return loadDatacenterRanges(setting === 'builtin' ? DATACENTER_RANGES_FILE : setting.file);
}
