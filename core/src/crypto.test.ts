import { describe, expect, it } from 'vitest';
import { pooledRandomBytes, randomId } from './crypto.ts';

describe('pooled random values', () => {
  it('never hands out the same bytes twice, across many refills of the pool', () => {
    const seen = new Set<string>();
    // 12-byte values do not divide 4 KiB: refills happen mid-sequence, where an off-by-one would repeat.
    for (let i = 0; i < 5000; i++) seen.add(randomId(12));
    for (let i = 0; i < 5000; i++) seen.add(pooledRandomBytes(12).toString('base64url'));
    expect(seen.size).toBe(10_000);
  });

  it('gives each caller its own copy, of the length asked, and large sizes straight from the CSPRNG', () => {
    const a = pooledRandomBytes(16);
    const copy = Buffer.from(a);
    a.fill(0);
    const b = pooledRandomBytes(16);
    expect(b.equals(Buffer.alloc(16))).toBe(false);
    expect(copy.equals(Buffer.alloc(16))).toBe(false);
    expect(pooledRandomBytes(1000)).toHaveLength(1000);
    expect(Buffer.from(randomId(), 'base64url')).toHaveLength(16);
    expect(Buffer.from(randomId(100), 'base64url')).toHaveLength(100);
  });
});
