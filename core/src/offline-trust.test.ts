import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MemoryOfflineTrust,
  type OfflineTrust,
  OUTAGE_GRACE_SECONDS,
  RedisOfflineTrust,
} from './offline-trust.ts';
import { keyAccepts, type StandbyKeyEntry } from './standby-keys.ts';
import { CLOCK_SKEW_SECONDS } from './tokens/offline.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
redis.on('error', () => {});
const redisUp = await redis.connect().then(
  () => true,
  () => false,
);
if (!redisUp) {
  const message = `Redis is not reachable at ${REDIS_URL}: the Redis outage log cannot be tested.`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
}
const prefixes: string[] = [];
afterAll(async () => {
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  redis.disconnect();
});
function redisTrust(): OfflineTrust {
  const prefix = `gatehouse:test:${Math.random().toString(36).slice(2)}:`;
  prefixes.push(prefix);
  return new RedisOfflineTrust(redis, prefix);
}

const stores: [string, () => OfflineTrust, boolean][] = [
  ['memory', () => new MemoryOfflineTrust(), true],
  ['Redis', redisTrust, redisUp],
];

for (const [name, make, available] of stores) {
  describe.runIf(available)(`outage log and revocations (${name})`, () => {
    const grace = OUTAGE_GRACE_SECONDS * 1000;

    it('covers a moment inside a recorded window, with the grace either side, and nothing further', async () => {
      const trust = make();
      const start = Date.now() - 60_000;
      const until = Date.now() - 30_000;
      await trust.recordOutage('eu', 'p1', start, until);
      expect(await trust.outageCovers('eu', start + 1000)).toBe(true);
      expect(await trust.outageCovers('eu', start - grace + 1)).toBe(true);
      expect(await trust.outageCovers('eu', start - grace - 1)).toBe(false);
      expect(await trust.outageCovers('eu', until + grace - 1)).toBe(true);
      expect(await trust.outageCovers('eu', until + grace + 1)).toBe(false);
      // Per region: another region's outage vouches for nothing here.
      expect(await trust.outageCovers('us', start + 1000)).toBe(false);
    });

    it('a window extended by later probes, then closed on recovery, keeps one entry per process and start', async () => {
      const trust = make();
      const start = Date.now() - 10_000;
      await trust.recordOutage('eu', 'p1', start, start + 3000);
      await trust.recordOutage('eu', 'p1', start, start + 8000);
      await trust.recordOutage('eu', 'p2', start + 500, start + 9000);
      const windows = await trust.outages('eu');
      expect(windows).toEqual([
        { by: 'p1', startMs: start, untilMs: start + 8000 },
        { by: 'p2', startMs: start + 500, untilMs: start + 9000 },
      ]);
    });

    it('remembers revoked key ids', async () => {
      const trust = make();
      expect(await trust.isRevoked('k1')).toBe(false);
      await trust.revoke('k1');
      expect(await trust.isRevoked('k1')).toBe(true);
      expect(await trust.isRevoked('k2')).toBe(false);
    });
  });
}

describe('key states', () => {
  const entry = (status: StandbyKeyEntry['status'], retiredAt: number | null = null): StandbyKeyEntry => ({
    kid: 'k1',
    region: 'eu',
    key: 'x'.repeat(44),
    status,
    created_at: new Date(0).toISOString(),
    retired_at: retiredAt === null ? null : new Date(retiredAt * 1000).toISOString(),
    revoked_at: null,
  });
  const now = Math.floor(Date.now() / 1000);

  it('active vouches, revoked never, retired only for what it minted before its retirement (plus skew)', () => {
    expect(keyAccepts(entry('active'), now)).toBe(true);
    expect(keyAccepts(entry('revoked'), now - 3600)).toBe(false);
    expect(keyAccepts(entry('retired', now), now - 10)).toBe(true);
    expect(keyAccepts(entry('retired', now), now + CLOCK_SKEW_SECONDS)).toBe(true);
    expect(keyAccepts(entry('retired', now), now + CLOCK_SKEW_SECONDS + 1)).toBe(false);
  });
});
