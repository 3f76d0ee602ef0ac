import { rowsOf } from '@gatehouse/core/db';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaPeriod } from '../src/quotas/monthly-quota.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  REDIS_URL,
  redisAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * Quota as a weapon, through real HTTP: one client paced under every hourly allowance (24 inits an hour,
 * at the base price all along) spent a free app's monthly units, after which every visitor of the app got
 * a `dg_` token (degraded mode: a pass without a challenge). A source's share of the month's units is
 * bounded: past it, its inits are served at the image stage without spending the app's units, so the
 * app's visitors keep getting challenges. The risk engine's clock is set by the test (hours in moments);
 * addresses come from X-Forwarded-For behind TRUSTED_PROXIES=loopback.
 */
const run = await databaseAvailable();
const withRedis = run && (await redisAvailable('the shared quota share test'));

/** Small enough that one paced client exhausts it within the test without the share: 180 units. */
const QUOTA = 180;

function shareSuite(name: string, env: Record<string, string>) {
  describe(name, () => {
    let api: TestApi;
    let now = Date.now();
    beforeAll(async () => {
      api = await startTestApi({ TRUSTED_PROXIES: 'loopback', ...env });
      api.runtime.risk.clock = () => now;
    });
    afterAll(async () => {
      await api?.close();
    });

    const init = async (appKey: string, ip: string) => {
      const res = await api.post(
        '/v1/challenge/init',
        { app_key: appKey, action: 'login', signals },
        { ...CHROME, 'X-Forwarded-For': ip },
      );
      return { status: res.status, mode: res.body?.data?.mode, tier: res.body?.data?.tier };
    };

    async function used(appId: string): Promise<number> {
      const rows = await api.runtime.db.execute(
        sql`select challenges from app_usage where app_id = ${appId} and period = ${quotaPeriod()}`,
      );
      return Number(rowsOf<{ challenges: number | string }>(rows)[0]?.challenges ?? 0);
    }

    it('past its share the paced client is served priced challenges, the units stay, and a visitor gets a challenge, not dg_', async () => {
      const { appKey, appId } = await api.createApp({ name: 'drained', plan: 'free', monthly_quota: QUOTA });
      const modes: Record<string, number> = {};
      const tiers: Record<string, number> = {};
      for (let i = 0; i < QUOTA + 60; i++) {
        now += 150_000;
        const answer = await init(appKey, '198.51.100.61');
        expect(answer.status).toBe(200);
        modes[answer.mode] = (modes[answer.mode] ?? 0) + 1;
        tiers[answer.tier ?? '-'] = (tiers[answer.tier ?? '-'] ?? 0) + 1;
      }
      // Never a free pass for the paced client, and only its share of the app's units spent.
      expect(modes).toEqual({ challenge: QUOTA + 60 });
      expect(tiers.hard).toBeGreaterThan(0);
      const spent = await used(appId);
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThan(QUOTA);
      // Everyone else still gets a challenge at the base price.
      expect(await init(appKey, '192.0.2.80')).toMatchObject({
        status: 200,
        mode: 'challenge',
        tier: 'invisible',
      });
    }, 180_000);

    it('once the month is spent by many sources, a priced source gets a challenge, not a free pass', async () => {
      const { appKey } = await api.createApp({ name: 'spent', plan: 'free', monthly_quota: 3 });
      for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
        expect(await init(appKey, ip)).toMatchObject({ mode: 'challenge' });
      // A fresh visitor at the base price: degraded mode, as before (fail open for people).
      expect(await init(appKey, '192.0.2.4')).toMatchObject({ status: 200, mode: 'degraded' });
      // A client past its hourly allowance: no free pass from degraded mode.
      let last = { status: 0, mode: '' as string | undefined };
      for (let i = 0; i < 45; i++) {
        now += 60_000;
        last = await init(appKey, '198.51.100.62');
      }
      expect(last).toMatchObject({ status: 200, mode: 'challenge' });
    }, 180_000);
  });
}

describe.runIf(run)("one paced client cannot spend a free app's monthly units", () => {
  shareSuite('counts in this process (the embedded default)', {});
});

describe.runIf(withRedis)("one paced client cannot spend a free app's monthly units", () => {
  shareSuite('counts shared through Redis (REDIS_URL)', { REDIS_URL });
});
