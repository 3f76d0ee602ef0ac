import { apps } from '@gatehouse/core/db/schema';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../src/apps/plans.ts';
import { IssuanceLimiter, LocalBuckets } from '../src/quotas/issuance-limiter.ts';
import {
  databaseAvailable,
  freshPostgresDatabase,
  REDIS_URL,
  redisAvailable,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
} from './harness.ts';

/*
 * The per-app issuance limit of POST /v1/server/challenge/issue (free plan: 10 per second, burst 20):
 * beyond it the API answers 429 `rate_limit_exceeded` with Retry-After, at once; with REDIS_URL every
 * instance draws from one bucket per app.
 */
const { perSecond, burst } = PLANS.free.issuance;

const run = await databaseAvailable();

const runShared = run && (await redisAvailable('the shared rate-limit tests'));

type Issued = { status: number; retryAfter: string | null; error: string | undefined };

/** Fires `count` issue requests at once, spread round-robin over `targets`; times the whole burst. */
async function burstOf(
  count: number,
  targets: { api: TestApi; headers: Record<string, string> }[],
): Promise<{ results: Issued[]; seconds: number }> {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const { api, headers } = targets[i % targets.length]!;
      const res = await api.post('/v1/server/challenge/issue', { action: 'login' }, headers);
      return { status: res.status, retryAfter: res.headers.get('retry-after'), error: res.body?.error };
    }),
  );
  return { results, seconds: (performance.now() - started) / 1000 };
}

/** At most the burst plus one refill for every started second of the window. */
function ceiling(seconds: number): number {
  return burst + perSecond * Math.ceil(seconds);
}

function expectRefusalsWellFormed(results: Issued[]): void {
  for (const r of results) expect([200, 429]).toContain(r.status);
  for (const r of results.filter((r) => r.status === 429)) {
    expect(r.error).toBe('rate_limit_exceeded');
    expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(Number(r.retryAfter))).toBe(true);
  }
}

describe('local token buckets (one process, no Redis)', () => {
  const rate = { perSecond, burst };

  it('grants the burst, then refuses until a refill interval has passed', () => {
    const buckets = new LocalBuckets();
    const t0 = 1_000_000;
    const granted = Array.from({ length: burst + 5 }, () => buckets.take('a', rate, t0)).filter(Boolean);
    expect(granted).toHaveLength(burst);
    expect(buckets.take('a', rate, t0 + 999)).toBe(false);
    const refilled = Array.from({ length: perSecond + 5 }, () => buckets.take('a', rate, t0 + 1_000));
    expect(refilled.filter(Boolean)).toHaveLength(perSecond);
  });

  it('never holds more than the burst, however long it stayed idle', () => {
    const buckets = new LocalBuckets();
    const t0 = 1_000_000;
    expect(buckets.take('a', rate, t0)).toBe(true);
    const later = t0 + 3_600_000;
    const granted = Array.from({ length: burst * 3 }, () => buckets.take('a', rate, later)).filter(Boolean);
    expect(granted).toHaveLength(burst);
  });

  it('keeps refills on whole intervals from the first use', () => {
    const buckets = new LocalBuckets();
    const t0 = 1_000_000;
    for (let i = 0; i < burst; i++) buckets.take('a', rate, t0);
    // 1.5 s later one refill has happened; at 2.0 s the second, not at 2.4 s after the first.
    const at1500 = Array.from({ length: 15 }, () => buckets.take('a', rate, t0 + 1_500)).filter(Boolean);
    expect(at1500).toHaveLength(perSecond);
    expect(buckets.take('a', rate, t0 + 1_999)).toBe(false);
    expect(buckets.take('a', rate, t0 + 2_000)).toBe(true);
  });

  it('keeps one bucket per key', () => {
    const buckets = new LocalBuckets();
    for (let i = 0; i < burst; i++) buckets.take('a', rate, 0);
    expect(buckets.take('a', rate, 0)).toBe(false);
    expect(buckets.take('b', rate, 0)).toBe(true);
  });

  it('answers without waiting: thousands of takes for one app in well under a second', async () => {
    const limiter = new IssuanceLimiter();
    const started = performance.now();
    const decisions = await Promise.all(
      Array.from({ length: 5_000 }, () => limiter.take('busy-app', { perSecond: 1, burst: 4_000 })),
    );
    const elapsed = performance.now() - started;
    expect(decisions.filter((d) => d.allowed)).toHaveLength(4_000);
    expect(decisions.find((d) => !d.allowed)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    // Queued takes would wait for refills at 1 a second (over 16 minutes); 2 s leaves room for a busy machine.
    expect(elapsed).toBeLessThan(2_000);
    await limiter.close();
  });
});

describe.runIf(run)('issuance rate limit, one instance', () => {
  let api: TestApi;
  let headers: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name: 'limited', plan: 'free' });
    headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
  });
  afterAll(() => api?.close());

  it('answers 429 rate_limit_exceeded with Retry-After beyond the burst, then refills', async () => {
    const { results, seconds } = await burstOf(100, [{ api, headers }]);
    const ok = results.filter((r) => r.status === 200).length;
    expectRefusalsWellFormed(results);
    expect(ok).toBeGreaterThanOrEqual(burst);
    expect(ok).toBeLessThanOrEqual(ceiling(seconds));
    expect(results.some((r) => r.status === 429)).toBe(true);

    // One refill interval later the app may issue again.
    await new Promise((r) => setTimeout(r, 1_100));
    const again = await api.post('/v1/server/challenge/issue', { action: 'login' }, headers);
    expect(again.status).toBe(200);
    expect(again.body.data.server_token).toMatch(/^sct_/);
  });

  it('limits each app separately', async () => {
    const other = await api.createApp({ name: 'neighbour', plan: 'free' });
    const res = await api.post(
      '/v1/server/challenge/issue',
      { action: 'login' },
      { 'X-App-Key': other.appKey, 'X-App-Secret': other.appSecret },
    );
    expect(res.status).toBe(200);
  });
});

describe.runIf(runShared)('issuance rate limit shared through Redis by two instances', () => {
  let first: TestApi;
  let second: TestApi;
  let redis: Redis;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    if (TEST_DATABASE === 'postgres') {
      // Two instances on one database, as in production.
      const database = await freshPostgresDatabase();
      drop = database.drop;
      first = await startTestApi({ REDIS_URL, DATABASE_URL: database.url });
      second = await startTestApi({ REDIS_URL, DATABASE_URL: database.url });
    } else {
      // PGlite lives inside one process: each instance has its own, holding the same app row.
      first = await startTestApi({ REDIS_URL });
      second = await startTestApi({ REDIS_URL });
    }
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await drop?.();
    redis?.disconnect();
  });

  /** A free-plan app both instances know, with the credentials for each. */
  async function sharedApp() {
    const created = await first.createApp({ name: 'shared', plan: 'free' });
    if (TEST_DATABASE !== 'postgres') {
      const [row] = await first.runtime.db.select().from(apps).where(eq(apps.id, created.appId));
      await second.runtime.db.insert(apps).values(row!);
    }
    const headers = { 'X-App-Key': created.appKey, 'X-App-Secret': created.appSecret };
    return { appId: created.appId, targets: [first, second].map((api) => ({ api, headers })) };
  }

  it('bounds the successes of both instances together by one burst', async () => {
    const { targets } = await sharedApp();
    const { results, seconds } = await burstOf(80, targets);
    const ok = results.filter((r) => r.status === 200).length;
    expectRefusalsWellFormed(results);
    expect(ok).toBeGreaterThanOrEqual(burst);
    expect(ok).toBeLessThanOrEqual(ceiling(seconds));
  });

  it('refuses on one instance once the other has drained the bucket', async () => {
    const { appId, targets } = await sharedApp();
    const [viaFirst, viaSecond] = targets;
    // 1. Drain through the first instance until it refuses.
    const drained = await burstOf(burst * 2, [viaFirst!]);
    expect(drained.results.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    // 2. The second instance has issued nothing: with separate buckets all 15 would pass; with the shared
    //    one at most a refill (10) can, within a second of the drain.
    const started = performance.now();
    const after = await burstOf(15, [viaSecond!]);
    const window = (performance.now() - started) / 1000 + drained.seconds;
    expectRefusalsWellFormed(after.results);
    const ok = after.results.filter((r) => r.status === 200).length;
    expect(ok).toBeLessThanOrEqual(perSecond * Math.ceil(window));
    expect(ok).toBeLessThan(15);

    // 3. The bucket's Redis keys expire on their own.
    const keys = await redis.keys(`b_gatehouse-issuance-*-${appId}_*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(5 * 60_000);
    }
  });

  it('never makes a caller wait, even when instances race for the last unit', async () => {
    // Bottleneck's schedule() checks capacity and registers in two Redis scripts: losing the race in
    // between left a job queued until the next refill, and every later call queued behind it (seconds).
    const limiters = [
      new IssuanceLimiter(new Redis(REDIS_URL, { maxRetriesPerRequest: 2 })),
      new IssuanceLimiter(new Redis(REDIS_URL, { maxRetriesPerRequest: 2 })),
    ];
    const appId = `race-${crypto.randomUUID()}`;
    const rate = { perSecond, burst };
    const started = performance.now();
    let allowed = 0;
    let slowest = 0;
    async function hammer(limiter: IssuanceLimiter) {
      while (performance.now() - started < 2_500) {
        const t = performance.now();
        if ((await limiter.take(appId, rate)).allowed) allowed++;
        slowest = Math.max(slowest, performance.now() - t);
      }
    }
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => hammer(limiters[i % 2]!)));
    } finally {
      await Promise.all(limiters.map((l) => l.close()));
    }
    const seconds = (performance.now() - started) / 1000;
    // A caller stuck behind a queued job waited seconds; 1.5 s leaves room for a busy machine.
    expect(slowest).toBeLessThan(1_500);
    expect(allowed).toBeGreaterThanOrEqual(burst + perSecond);
    expect(allowed).toBeLessThanOrEqual(ceiling(seconds));
  });
});
