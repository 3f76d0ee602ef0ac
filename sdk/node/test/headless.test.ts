import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSettingsInput } from '../../../api/src/apps/settings.ts';
import { GatehouseChallengeError, IMAGE_TIER_MESSAGE, solveChallenge } from '../src/headless.ts';
import { Gatehouse, GatehouseAuthenticationError, GatehouseError } from '../src/index.ts';

const INVISIBLE_ONLY = { invisible_below: 101, image_below: 101 };
const IMAGE_ONLY = { invisible_below: 0, image_below: 101, image_kinds: ['slide'] };

/** The headless client speaking the real challenge protocol to a real API. */
describe('solveChallenge against a real API', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function app(settings: Partial<AppSettingsInput> = {}) {
    const created = await api.createApp({ name: 'headless', ...settings });
    const gh = new Gatehouse({ appKey: created.appKey, appSecret: created.appSecret, baseUrl: api.url });
    return { ...created, gh };
  }

  it('test mode: a pass token the server SDK accepts once for its action', async () => {
    const a = await app({ test_mode: true });
    const solved = await solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login' });
    expect(solved).toMatchObject({ tier: 'invisible', degraded: false, expiresIn: 300 });
    expect(solved.passToken).toMatch(/^pt_/);
    expect(solved.challengeId).toMatch(/^ch_/);
    const verdict = await a.gh.validate(solved.passToken, { expectedAction: 'login' });
    expect(verdict).toMatchObject({ valid: true, accepted: true, challengeId: solved.challengeId });
    expect(verdict.captchaArgs).toMatchObject({ platform: 'web', userIp: '127.0.0.1' });
    expect(await a.gh.validate(solved.passToken)).toMatchObject({ errorCode: 'token_already_used' });
  });

  it('a policy that puts every score in the invisible tier: real difficulty, solved', async () => {
    const a = await app({ risk_policy: INVISIBLE_ONLY });
    const solved = await solveChallenge({
      baseUrl: api.url,
      appKey: a.appKey,
      action: 'pay',
      platform: 'android',
    });
    expect(solved.tier).toBe('invisible');
    expect(solved.solveMs).toBeGreaterThan(0);
    const verdict = await a.gh.validate(solved.passToken, { expectedAction: 'pay' });
    expect(verdict).toMatchObject({ accepted: true, captchaArgs: { platform: 'android' } });
  }, 60_000);

  it('an image tier fails with the documented sentence, before any proof-of-work', async () => {
    const a = await app({ risk_policy: IMAGE_ONLY });
    const error = await solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(GatehouseChallengeError);
    expect(error.code).toBe('image_tier');
    expect(error.message).toContain(IMAGE_TIER_MESSAGE);
  });

  it('quota exhausted: returns the dg_ token, flagged degraded; it validates as degraded', async () => {
    const a = await app({ monthly_quota: 0, overage_allowed: false });
    const solved = await solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login' });
    expect(solved).toMatchObject({ tier: 'degraded', degraded: true, challengeId: null, expiresIn: 300 });
    expect(solved.passToken).toMatch(/^dg_/);
    const verdict = await a.gh.validate(solved.passToken, { expectedAction: 'login' });
    expect(verdict).toMatchObject({
      valid: false,
      accepted: false,
      degraded: true,
      reason: 'quota_exhausted',
    });
  });

  it('server_token_required: refused without one, solved with one, its bound uid echoed', async () => {
    const a = await app({ test_mode: true, server_token_required: true });
    const refused = await solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login' }).catch(
      (e) => e,
    );
    expect(refused).toBeInstanceOf(GatehouseError);
    expect(refused).toMatchObject({ code: 'server_token_required', status: 403 });
    const { serverToken } = await a.gh.issueServerToken({ action: 'login', bindUid: 'user-7' });
    const solved = await solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login', serverToken });
    expect(await a.gh.validate(solved.passToken, { expectedAction: 'login' })).toMatchObject({
      accepted: true,
      uid: 'user-7',
    });
  });

  it('an unknown app key is an authentication error; an aborted solve rejects', async () => {
    const unknown = solveChallenge({ baseUrl: api.url, appKey: 'ak_nobody', action: 'login' });
    await expect(unknown).rejects.toBeInstanceOf(GatehouseAuthenticationError);
    const a = await app({ test_mode: true });
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(
      solveChallenge({ baseUrl: api.url, appKey: a.appKey, action: 'login', signal: controller.signal }),
    ).rejects.toThrow('stopped');
  });
});
