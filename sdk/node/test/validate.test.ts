import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintDegradedToken } from '../../../api/src/tokens/degraded-tokens.ts';
import { mintPassToken } from '../../../api/src/tokens/pass-tokens.ts';
import { Gatehouse, GatehouseAuthenticationError, GatehouseConnectionError } from '../src/index.ts';

/** The server SDK against a real API (PGlite in memory) on an ephemeral port. */
describe('@gatehouse/node against a real API', () => {
  let api: TestApi;
  let app: { appKey: string; appSecret: string; appId: string };
  let gh: Gatehouse;

  beforeAll(async () => {
    api = await startTestApi();
    app = await api.createApp({ name: 'sdk-node' });
    gh = new Gatehouse({ appKey: app.appKey, appSecret: app.appSecret, baseUrl: api.url });
  });
  afterAll(() => api?.close());

  /** A pass token exactly as the challenge flow mints it on a solved challenge. */
  async function passToken(action = 'login', appId = app.appId) {
    const row = (await api.runtime.apps.findById(appId))!;
    return mintPassToken(api.runtime.db, api.runtime.keys, {
      app: row,
      challengeId: 'ch_sdk',
      action,
      captchaArgs: {
        platform: 'web',
        user_ip: '203.0.113.7',
        referer: 'https://shop.example/login',
        pkg: null,
        solved_at: Math.floor(Date.now() / 1000),
        risk_score: 12,
      },
    });
  }

  it('accepts a token once; the replay is a verdict with token_already_used', async () => {
    const token = await passToken('login');
    const first = await gh.validate(token, { expectedAction: 'login', clientIp: '203.0.113.99' });
    expect(first).toMatchObject({
      valid: true,
      accepted: true,
      action: 'login',
      challengeId: 'ch_sdk',
      uid: null,
      clientIpCheck: 'match',
      captchaArgs: { platform: 'web', userIp: '203.0.113.7', riskScore: 12 },
    });
    expect(first.requestId).toBeTruthy();
    const replay = await gh.validate(token, { expectedAction: 'login' });
    expect(replay).toMatchObject({ valid: false, accepted: false, errorCode: 'token_already_used' });
  });

  it('a token minted for another action is the token_action_mismatch verdict (the API checks it)', async () => {
    const verdict = await gh.validate(await passToken('register'), { expectedAction: 'login' });
    expect(verdict).toMatchObject({
      valid: false,
      accepted: false,
      action: 'register',
      errorCode: 'token_action_mismatch',
    });
  });

  it('forged and unknown tokens are token_not_found verdicts', async () => {
    const token = await passToken();
    // Never the genuine token: about 1 MAC in 250 already ends in "AA".
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await gh.validate(forged)).toMatchObject({ valid: false, errorCode: 'token_not_found' });
    expect(await gh.validate('pt_garbage')).toMatchObject({ valid: false, errorCode: 'token_not_found' });
  });

  it('a client_ip rejection is a verdict with its code, and so is a base URL with a trailing slash', async () => {
    const strict = await api.createApp({ name: 'strict', client_ip_policy: 'reject' });
    const slashed = new Gatehouse({
      appKey: strict.appKey,
      appSecret: strict.appSecret,
      baseUrl: `${api.url}/`,
    });
    const verdict = await slashed.validate(await passToken('login', strict.appId), {
      clientIp: '198.51.100.4',
    });
    expect(verdict).toMatchObject({
      valid: false,
      errorCode: 'client_ip_mismatch',
      reason: 'client_ip_mismatch',
      clientIpCheck: 'mismatch',
      action: 'login',
    });
  });

  it('another app cannot validate this app’s token', async () => {
    const other = await api.createApp({ name: 'other' });
    const ghOther = new Gatehouse({ appKey: other.appKey, appSecret: other.appSecret, baseUrl: api.url });
    expect(await ghOther.validate(await passToken())).toMatchObject({
      valid: false,
      errorCode: 'token_not_found',
    });
  });

  it('dg_ tokens: degraded, reason quota_exhausted, never valid', async () => {
    const token = mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login');
    const verdict = await gh.validate(token, { expectedAction: 'login' });
    expect(verdict).toMatchObject({
      valid: false,
      accepted: false,
      degraded: true,
      reason: 'quota_exhausted',
      expired: false,
      errorCode: null,
    });
  });

  it('co_ tokens are client-only; a forged offline_ token is flagged offline and not found', async () => {
    expect(await gh.validate('co_whatever')).toMatchObject({ valid: false, clientOnly: true });
    expect(await gh.validate('offline_whatever')).toMatchObject({
      valid: false,
      offline: true,
      errorCode: 'token_not_found',
    });
  });

  it('a retry after a lost answer gets the same valid verdict, thanks to the idempotency key', async () => {
    const token = await passToken('login');
    let calls = 0;
    // The first request reaches the API (which consumes the token), then its answer is lost.
    const dropFirstAnswer: typeof fetch = async (input, init) => {
      // Discovery (GET /v1/standby on first contact) passes through; the first validation loses its answer.
      if (init?.method !== 'POST') return fetch(input, init);
      calls++;
      const res = await fetch(input, init);
      if (calls === 1) {
        await res.text();
        throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
      }
      return res;
    };
    const flaky = new Gatehouse({ ...credsOf(app), baseUrl: api.url, fetch: dropFirstAnswer });
    const verdict = await flaky.validate(token, { expectedAction: 'login' });
    expect(calls).toBe(2);
    expect(verdict).toMatchObject({ valid: true, accepted: true, action: 'login' });
    // A new logical call is a replay.
    expect(await gh.validate(token)).toMatchObject({ valid: false, errorCode: 'token_already_used' });
  });

  it('wrong credentials throw GatehouseAuthenticationError with the API code, status and request id', async () => {
    const wrong = new Gatehouse({ appKey: app.appKey, appSecret: 'sk_wrong', baseUrl: api.url });
    const error = await wrong.validate(await passToken()).catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseAuthenticationError);
    expect(error).toMatchObject({ code: 'invalid_app_secret', status: 401 });
    expect(error.requestId).toBeTruthy();
    const unknown = new Gatehouse({ appKey: 'ak_nobody', appSecret: 'sk_x', baseUrl: api.url });
    await expect(unknown.validate('pt_x')).rejects.toMatchObject({ code: 'invalid_app_key' });
  });

  it('an API that is not there throws GatehouseConnectionError after the retries', async () => {
    const down = new Gatehouse({ ...credsOf(app), baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });
    await expect(down.validate('pt_x')).rejects.toBeInstanceOf(GatehouseConnectionError);
  });

  it('issues server tokens, honouring rate_limit_exceeded with Retry-After', async () => {
    const one = await gh.issueServerToken({ action: 'login', ttl: 60, maxUses: 2, bindUid: 'user-1' });
    expect(one.serverToken).toMatch(/^sct_/);
    expect(one.expiresIn).toBe(60);
    expect(Math.abs(one.issuedAt - Date.now() / 1000)).toBeLessThan(5);
    // The free plan allows a burst of 20 then 10 a second: 30 at once needs the SDK's backing off.
    let limited = 0;
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 429) limited++;
      return res;
    };
    const busy = new Gatehouse({ ...credsOf(app), baseUrl: api.url, fetch: counting });
    const many = await Promise.all(
      Array.from({ length: 30 }, () => busy.issueServerToken({ action: 'login' })),
    );
    expect(new Set(many.map((t) => t.serverToken)).size).toBe(30);
    expect(limited).toBeGreaterThan(0);
  });

  it('a ttl above 900 is granted as 900 (expiresIn says so); a ttl of 0 is the API’s invalid_request', async () => {
    expect((await gh.issueServerToken({ action: 'login', ttl: 901 })).expiresIn).toBe(900);
    await expect(gh.issueServerToken({ action: 'login', ttl: 0 })).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
    });
  });
});

function credsOf(app: { appKey: string; appSecret: string }) {
  return { appKey: app.appKey, appSecret: app.appSecret };
}
