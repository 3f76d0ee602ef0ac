import { Redis } from 'ioredis';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AuthThrottle, type AuthThrottleLimits } from '../src/auth-throttle.ts';

/*
 * Counting in memory, the throttle answers a check at once (undefined: no promise, no counter read) while
 * no failure was recorded within a window, since every counter is then empty (validate's every call is
 * checked). Once one is recorded, checks read the counters and refuse; with Redis, the
 * counts are every instance's, so a check always reads them.
 */
const LIMITS: AuthThrottleLimits = {
  windowSeconds: 60,
  perSourceAndKey: 2,
  perSource: 30,
  perKey: 100,
  tokensPerSourceAndApp: 60,
};
const silent = pino({ level: 'silent' });

describe('the authentication throttle with nothing counted', () => {
  it('in memory: no look-up before the first failure, the counters read and refusing after it', async () => {
    const throttle = new AuthThrottle(LIMITS, silent);
    expect(throttle.check('app', '192.0.2.1', 'ak_quiet')).toBeUndefined();
    expect(throttle.check('admin', '192.0.2.1', 'admin')).toBeUndefined();
    await throttle.fail('app', '192.0.2.1', 'ak_quiet');
    const read = throttle.check('app', '192.0.2.1', 'ak_quiet');
    expect(read).toBeInstanceOf(Promise);
    await expect(read).resolves.toBeUndefined();
    await throttle.fail('app', '192.0.2.1', 'ak_quiet');
    await expect(throttle.check('app', '192.0.2.1', 'ak_quiet')).rejects.toMatchObject({
      code: 'rate_limited',
    });
    // Another source has failed nothing: read, and not refused.
    const other = throttle.check('app', '192.0.2.2', 'ak_quiet');
    expect(other).toBeInstanceOf(Promise);
    await expect(other).resolves.toBeUndefined();
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  it.runIf(redisUrl)('with Redis: every check reads the shared counts', async () => {
    const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
    try {
      const throttle = new AuthThrottle(LIMITS, silent, redis);
      const key = `ak_quiet_${process.pid}_${Date.now()}`;
      const read = throttle.check('app', '192.0.2.3', key);
      expect(read).toBeInstanceOf(Promise);
      await expect(read).resolves.toBeUndefined();
      // A failure recorded by another instance (a second throttle on the same Redis) is seen here.
      const elsewhere = new AuthThrottle(LIMITS, silent, redis);
      await elsewhere.fail('app', '192.0.2.3', key);
      await elsewhere.fail('app', '192.0.2.3', key);
      await expect(throttle.check('app', '192.0.2.3', key)).rejects.toMatchObject({ code: 'rate_limited' });
    } finally {
      redis.disconnect();
    }
  });
});
