import { describe, expect, it } from 'vitest';
import { periodAt, quotaPeriod } from './monthly-quota.ts';

/** The quota's month is remembered between calls: it must change exactly at each UTC month's edge. */
describe('quota period', () => {
  it('is the UTC month of the time, across month and year edges, in any order', () => {
    const at = (iso: string) => Date.parse(iso);
    const times = [
      '2026-11-27T12:00:00.000Z',
      '2026-11-30T23:59:59.999Z',
      '2026-12-01T00:00:00.000Z',
      '2026-11-30T23:59:59.999Z', // back: the clock was set back
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2024-02-29T10:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
      '2024-02-01T00:00:00.000Z',
      '2024-01-31T23:59:59.999Z',
    ];
    for (const iso of times) {
      expect(periodAt(at(iso))).toBe(iso.slice(0, 7));
      expect(quotaPeriod(new Date(iso))).toBe(iso.slice(0, 7));
      // Asked twice, the remembered month answers the same.
      expect(periodAt(at(iso))).toBe(iso.slice(0, 7));
    }
    expect(quotaPeriod()).toBe(new Date().toISOString().slice(0, 7));
  });
});
