import { difficultyForScore, expectedAttempts } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * The price of a pass rises with pressure, through real HTTP: a client paced under every per-minute limit
 * (the red team's 58 inits a minute got 3,455 invisible passes an hour, all at the base price) pays the
 * base price for its hourly allowance, then a proof-of-work that doubles, then an image beside it, then a
 * refusal with Retry-After; spreading over the addresses of one /24 does not reset the price, and a fresh
 * address elsewhere keeps the base price. The risk engine's clock is set by the test: an hour in moments.
 * Addresses come from X-Forwarded-For behind TRUSTED_PROXIES=loopback, as behind an ingress.
 */
const run = await databaseAvailable();
const withRedis = run && (await redisAvailable('the shared pressure pricing test'));

/** What a desktop Chrome from a home address (score 10) pays with no pressure. */
const BASE = expectedAttempts(difficultyForScore(10));

type Step = { status: number; tier?: string; work: number; retryAfter: number | null };

function pressureSuite(name: string, env: Record<string, string>) {
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

    async function init(appKey: string, ip: string): Promise<Step> {
      const res = await api.post(
        '/v1/challenge/init',
        { app_key: appKey, action: 'login', signals },
        { ...CHROME, 'X-Forwarded-For': ip },
      );
      const data = res.body?.data;
      return {
        status: res.status,
        tier: data?.tier,
        work: data?.pow ? expectedAttempts(data.pow) : 0,
        retryAfter: res.headers.get('retry-after') === null ? null : Number(res.headers.get('retry-after')),
      };
    }

    /** The clock moved to the start of the next counting hour: each test's hour is the same whenever it runs. */
    const nextHour = () => {
      now = Math.ceil((now + 1) / 3_600_000) * 3_600_000;
    };

    /** One init every `gapMs` of simulated time from `ips` in turn, until refused or `max` inits. */
    async function paced(appKey: string, ips: string[], gapMs: number, max: number): Promise<Step[]> {
      const steps: Step[] = [];
      for (let i = 0; i < max; i++) {
        now += gapMs;
        const step = await init(appKey, ips[i % ips.length] as string);
        steps.push(step);
        if (step.status !== 200) break;
      }
      return steps;
    }

    it('one address paced at 3 a minute: base price for its allowance, doubling, an image, then refused within the hour', async () => {
      const { appKey } = await api.createApp({ name: 'paced' });
      nextHour();
      const start = now;
      const steps = await paced(appKey, ['198.51.100.7'], 20_000, 400);
      const served = steps.filter((s) => s.status === 200);
      expect(served[0]).toMatchObject({ tier: 'invisible', work: BASE });
      const atBase = served.filter((s) => s.tier === 'invisible' && s.work === BASE).length;
      expect(atBase).toBeGreaterThanOrEqual(20);
      expect(atBase).toBeLessThanOrEqual(100);
      // The price never falls while the pressure grows, and it doubles many times over.
      for (let i = 1; i < served.length; i++)
        expect(served[i]!.work).toBeGreaterThanOrEqual(served[i - 1]!.work);
      expect(Math.max(...served.map((s) => s.work))).toBeGreaterThanOrEqual(256 * BASE);
      // The image stage comes before the refusal, and carries the priced proof-of-work.
      const firstHard = served.findIndex((s) => s.tier === 'hard');
      expect(firstHard).toBeGreaterThan(atBase);
      expect(served[firstHard]!.work).toBeGreaterThanOrEqual(16 * BASE);
      const last = steps.at(-1)!;
      expect(last.status).toBe(403);
      expect(last.retryAfter).toBeGreaterThan(0);
      expect(last.retryAfter).toBeLessThanOrEqual(3600);
      expect(now - start).toBeLessThan(3_600_000);

      // An hour of quiet: the count has decayed and the address starts again at the base price.
      now += 2 * 3_600_000;
      expect(await init(appKey, '198.51.100.7')).toMatchObject({
        status: 200,
        tier: 'invisible',
        work: BASE,
      });
    }, 120_000);

    it('spreading over the addresses of one /24 does not reset the price; a fresh address elsewhere keeps the base price', async () => {
      const { appKey } = await api.createApp({ name: 'spread' });
      nextHour();
      const neighbours = Array.from({ length: 200 }, (_, i) => `203.0.113.${i + 1}`);
      // Six inits a minute from the /24 as a whole, each address far under its own allowance.
      const steps = await paced(appKey, neighbours, 10_000, 600);
      const served = steps.filter((s) => s.status === 200);
      const atBase = served.filter((s) => s.work === BASE).length;
      expect(atBase).toBeGreaterThanOrEqual(50);
      expect(atBase).toBeLessThanOrEqual(150);
      expect(steps.at(-1)).toMatchObject({ status: 403 });
      expect(served.length).toBeLessThan(1000);

      // The same moment, a fresh address of another network: its first pass at the base price.
      expect(await init(appKey, '192.0.2.44')).toMatchObject({ status: 200, tier: 'invisible', work: BASE });
      // Its own neighbour in the pressed /24, never seen before, is not.
      expect(await init(appKey, '203.0.113.250')).toMatchObject({ status: 403 });
    }, 120_000);

    it('the pressure is per app: another app of the same deployment prices the pressed network afresh', async () => {
      const pressed = await api.createApp({ name: 'pressed' });
      const other = await api.createApp({ name: 'other' });
      nextHour();
      const steps = await paced(pressed.appKey, ['198.51.100.99'], 10_000, 400);
      expect(steps.at(-1)).toMatchObject({ status: 403 });
      expect(await init(other.appKey, '198.51.100.99')).toMatchObject({ status: 200, work: BASE });
    }, 120_000);
  });
}

describe.runIf(run)('pressure pricing', () => {
  pressureSuite('counts in this process (the embedded default)', {});
});

describe.runIf(withRedis)('pressure pricing', () => {
  pressureSuite('counts shared through Redis (REDIS_URL)', { REDIS_URL });
});
