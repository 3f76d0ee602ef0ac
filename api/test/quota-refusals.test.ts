import { appUsage, serverTokens } from '@gatehouse/core/db/schema';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSettingsInput } from '../src/apps/settings.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

/*
 * Only what is served is counted. A challenge initialization that Gatehouse refuses (rate limited, 429;
 * rejected by the risk policy, 403) spends nothing of the app's monthly quota, and one that ends in a `dg_`
 * token spends no use of the server token it presented: the quota is counted after the rate limit and the
 * risk engine decide, else anyone holding the public app key could spend a no-overage app's month on
 * refused requests.
 */
const run = await databaseAvailable();

const BROWSER = {
  'User-Agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Accept-Language': 'en-GB,en;q=0.9',
};
const signals = { webdriver: false, languages: ['en-GB'], screen: { w: 1440, h: 900 } };

describe.runIf(run)('the monthly quota counts only challenges served', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function app(settings: Partial<AppSettingsInput>) {
    const created = await api.createApp({ name: 'quota', ...settings });
    return { ...created, auth: { 'X-App-Key': created.appKey, 'X-App-Secret': created.appSecret } };
  }
  async function used(appId: string): Promise<number> {
    const rows = await api.runtime.db.select().from(appUsage).where(eq(appUsage.appId, appId));
    return rows.reduce((sum, r) => sum + Number(r.challenges), 0);
  }
  const init = (appKey: string, extra: object = {}) =>
    api.post('/v1/challenge/init', { app_key: appKey, action: 'login', signals, ...extra }, BROWSER);

  it('quota 3 and 1 init per minute: one challenge, then 429s only, and one unit of the month spent', async () => {
    const a = await app({
      monthly_quota: 3,
      test_mode: true,
      risk_policy: { rate_limit: { ip_per_minute: 1 } },
    });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await init(a.appKey));
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.body.data.mode).toBe('challenge');
    for (const refused of answers.slice(1)) {
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await used(a.appId)).toBe(1);
  });

  it('a reject-everything policy: 403 request_rejected every time, and nothing of the month spent', async () => {
    const a = await app({
      monthly_quota: 2,
      risk_policy: { invisible_below: 0, image_below: 0, high: 'reject' },
    });
    for (let i = 0; i < 5; i++) {
      const refused = await init(a.appKey);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('request_rejected');
    }
    expect(await used(a.appId)).toBe(0);
  });

  it('an init that ends in dg_ spends no use of its server token; a served one spends one', async () => {
    const a = await app({ monthly_quota: 1, test_mode: true, server_token_required: true });
    const issued = await api.post('/v1/server/challenge/issue', { action: 'login', max_uses: 5 }, a.auth);
    expect(issued.status).toBe(200);
    const serverToken = issued.body.data.server_token as string;
    const uses = async () => {
      const rows = await api.runtime.db.select().from(serverTokens);
      return rows.filter((r) => r.appId === a.appId).map((r) => r.uses);
    };

    const served = await init(a.appKey, { server_token: serverToken });
    expect(served.body.data.mode).toBe('challenge');
    expect(await uses()).toEqual([1]);
    for (let i = 0; i < 3; i++) {
      const degraded = await init(a.appKey, { server_token: serverToken });
      expect(degraded.status).toBe(200);
      expect(degraded.body.data.mode).toBe('degraded');
    }
    expect(await uses()).toEqual([1]);
    expect(await used(a.appId)).toBe(1);
  });

  it('a refused server token (exhausted) spends nothing of the quota either', async () => {
    const a = await app({ monthly_quota: 10, test_mode: true });
    const issued = await api.post('/v1/server/challenge/issue', { action: 'login', max_uses: 1 }, a.auth);
    const serverToken = issued.body.data.server_token as string;
    expect((await init(a.appKey, { server_token: serverToken })).body.data.mode).toBe('challenge');
    for (let i = 0; i < 3; i++) {
      const refused = await init(a.appKey, { server_token: serverToken });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('server_token_exhausted');
    }
    expect(await used(a.appId)).toBe(1);
  });
});
