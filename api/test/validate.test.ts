import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintPassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

describe.runIf(run)('POST /v1/validate', () => {
  let api: TestApi;
  let creds: { appKey: string; appSecret: string; appId: string };
  let headers: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApi();
    creds = await api.createApp({ name: 'shop' });
    headers = { 'X-App-Key': creds.appKey, 'X-App-Secret': creds.appSecret };
  });
  afterAll(() => api?.close());

  async function mint(action = 'login', userIp = '203.0.113.7') {
    const app = (await api.runtime.apps.findById(creds.appId))!;
    return mintPassToken(api.runtime.db, api.runtime.keys, {
      app,
      challengeId: 'ch_test',
      action,
      captchaArgs: {
        platform: 'web',
        user_ip: userIp,
        referer: 'https://shop.example/login',
        pkg: null,
        solved_at: Math.floor(Date.now() / 1000),
        risk_score: 12,
      },
    });
  }

  it('accepts a fresh pass token once, echoing action and captcha_args', async () => {
    const token = await mint('login');
    const first = await api.post('/v1/validate', { pass_token: token }, headers);
    expect(first.status).toBe(200);
    expect(first.body.code).toBe(0);
    expect(first.body.data).toMatchObject({
      valid: true,
      action: 'login',
      challenge_id: 'ch_test',
      uid: null,
      captcha_args: { platform: 'web', user_ip: '203.0.113.7', risk_score: 12 },
    });
    const second = await api.post('/v1/validate', { pass_token: token }, headers);
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: -1, error: 'token_already_used' });
  });
});
