import { describe, expect, it } from 'vitest';
import { disjoint, intervalText, parseInterval, RangeTable } from './ranges.ts';

const iv = (text: string, tag: number) => {
  const parsed = parseInterval(text, tag);
  if (!parsed) throw new Error(text);
  return parsed;
};

describe('RangeTable', () => {
  it('finds the range holding an address at both ends and nowhere else, IPv4, mapped IPv4 and IPv6', () => {
    const table = new RangeTable([
      iv('203.0.113.0/24', 1),
      iv('198.51.100.10-198.51.100.20', 2),
      iv('2001:db8::/32', 3),
    ]);
    expect(table.lookup('203.0.113.0')).toBe(1);
    expect(table.lookup('203.0.113.255')).toBe(1);
    expect(table.lookup('203.0.114.0')).toBeUndefined();
    expect(table.lookup('198.51.100.9')).toBeUndefined();
    expect(table.lookup('198.51.100.20')).toBe(2);
    expect(table.lookup('::ffff:203.0.113.7')).toBe(1);
    expect(table.lookup('2001:db8:ffff::1')).toBe(3);
    expect(table.lookup('2001:db9::')).toBeUndefined();
    expect(table.lookup('not an ip')).toBeUndefined();
  });

  it('makes overlapping ranges disjoint and joins touching ranges of the same tag', () => {
    const out = disjoint([iv('10.0.1.0/24', 1), iv('10.0.0.0/24', 1), iv('10.0.1.128-10.0.3.255', 2)]);
    // 10.0.0.0/24 and 10.0.1.0/24 touch: one range; the tag-2 range starts inside it and keeps the rest.
    expect(out.map((i) => [...intervalText(i), i.tag])).toEqual([
      ['10.0.0.0', '10.0.1.255', 1],
      ['10.0.2.0', '10.0.3.255', 2],
    ]);
  });

  it('refuses what is not a range', () => {
    for (const bad of ['10.0.0.0/33', '10.0.0.0/x', '10.0.0.9-10.0.0.1', '1.2.3.4-::1', 'host']) {
      expect(parseInterval(bad, 0), bad).toBeNull();
    }
  });
});
