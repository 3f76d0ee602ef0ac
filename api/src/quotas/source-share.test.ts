import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, redisAvailable } from '../../test/harness.ts';
import { DEFAULT_PRESSURE, sharePressure } from '../risk/pressure.ts';
import { MemoryVelocity, RedisVelocity } from '../risk/velocity.ts';
import { overShare, quotaSharePolicy } from './source-share.ts';

const withRedis = await redisAvailable('the shared window counts test');

describe('a source share of the monthly units', () => {
  const policy = quotaSharePolicy.parse(undefined);

  it('a client past 2 % and a network past 10 % of the units, never below the floor', () => {
    expect(overShare([200, 200], 10_000, policy)).toBeUndefined();
    expect(overShare([201, 201], 10_000, policy)).toBe('quota.share_ip');
    expect(overShare([50, 1_001], 10_000, policy)).toBe('quota.share_prefix');
    // A small plan: the floor.
    expect(overShare([100, 100], 180, policy)).toBeUndefined();
    expect(overShare([101, 0], 180, policy)).toBe('quota.share_ip');
    // No units at all: nothing to share (the quota itself refuses).
    expect(overShare([10_000, 10_000], 0, policy)).toBeUndefined();
  });

  it('past its share a source is priced at least at the image stage, and flagged not to be counted', () => {
    const base = { doublings: 0, multiplier: 1, stage: 'base' as const, reasons: [] };
    expect(sharePressure(base, 'quota.share_ip', DEFAULT_PRESSURE)).toEqual({
      doublings: DEFAULT_PRESSURE.image_at,
      multiplier: 2 ** DEFAULT_PRESSURE.image_at,
      stage: 'image',
      reasons: [`quota.share_ip:+${DEFAULT_PRESSURE.image_at}`],
      overShare: true,
    });
    const refused = { doublings: 20, multiplier: 2 ** 20, stage: 'reject' as const, reasons: [] };
    expect(sharePressure(refused, 'quota.share_ip', DEFAULT_PRESSURE).stage).toBe('reject');
  });

  it('counters over other windows keep their own counts (memory)', () => {
    const minute = new MemoryVelocity();
    const hour = minute.withWindow(3_600_000);
    const t = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 5; i++) minute.hitNow(['k'], t);
    expect(hour.hitNow(['k'], t)).toEqual([1]);
    // Two minutes on, the minute's count is gone, the hour's is not.
    expect(minute.hitNow(['k'], t + 120_000)).toEqual([1]);
    expect(hour.hitNow(['k'], t + 120_000)[0]).toBeGreaterThan(1.9);
  });

  it('full of keys, the counter forgets the idlest: a source that keeps sending keeps its count', () => {
    const counter = new MemoryVelocity(1_000, 3_600_000);
    const t = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 50; i++) counter.hitNow(['pressing'], t + i);
    // A spray of 5,000 new keys, the pressing source still sending between them.
    for (let i = 0; i < 5_000; i++) {
      counter.hitNow([`spray-${i}`], t + 100 + i);
      if (i % 100 === 0) counter.hitNow(['pressing'], t + 100 + i);
    }
    expect(counter.hitNow(['pressing'], t + 6_000)).toEqual([50 + 50 + 1]);
    // The first sprayed keys, idle since, are forgotten.
    expect(counter.hitNow(['spray-0'], t + 6_001)).toEqual([1]);
  });

  it.runIf(withRedis)('counters over other windows keep their own counts (Redis)', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const minute = new RedisVelocity(redis);
      const hour = minute.withWindow(3_600_000);
      const key = `share-test-${process.pid}-${Date.now()}`;
      const t = Date.now();
      for (let i = 0; i < 5; i++) await minute.hit([key], t);
      expect(await hour.hit([key], t)).toEqual([1]);
      expect(await minute.hit([key], t)).toEqual([6]);
    } finally {
      redis.disconnect();
    }
  });
});
