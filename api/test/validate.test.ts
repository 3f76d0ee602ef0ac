import { randomBytes } from 'node:crypto';
import { randomId } from '@gatehouse/core/crypto';
import type { Database } from '@gatehouse/core/db';
import { passTokens } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { TokenKeys } from '@gatehouse/core/tokens';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintDegradedToken } from '../src/tokens/degraded-tokens.ts';
import { mintPassToken, type PassVerdict, validatePassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

const run = await databaseAvailable();

type Creds = { appKey: string; appSecret: string; appId: string };
const SOLVE_IP = '203.0.113.7';

describe.runIf(run)('POST /v1/validate', () => {
  let api: TestApi;
  let shop: Creds;
  let other: Creds;
  let strict: Creds;

  beforeAll(async () => {
    api = await startTestApi();
    shop = await api.createApp({ name: 'shop' });
    other = await api.createApp({ name: 'other' });
    strict = await api.createApp({ name: 'strict', client_ip_policy: 'reject' });
  });
  afterAll(() => api?.close());

  const auth = (c: Creds) => ({ 'X-App-Key': c.appKey, 'X-App-Secret': c.appSecret });

  /** Validates through HTTP and checks the answer against the OpenAPI document. */
  async function validate(creds: Creds, body: Json) {
    const res = await api.post('/v1/validate', body, auth(creds));
    expectMatchesOpenApi('/v1/validate', 'post', res);
    return res;
  }

  async function mint(creds: Creds = shop, action = 'login', userIp = SOLVE_IP, uid: string | null = null) {
    const app = (await api.runtime.apps.findById(creds.appId))!;
    return mintPassToken(api.runtime.db, api.runtime.keys, {
      app,
      challengeId: `ch_${randomId(8)}`,
      action,
      uid,
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

  /**
   * An error envelope as every reader expects it: the code at the top level and in `data.error` (where the
   * origin's SDKs read it), the text in `message` and `msg`; a token verdict is HTTP 200 with valid false.
   */
  function expectError(res: { status: number; body: Json }, status: number, error: string) {
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: -1, error, data: { error } });
    expect(typeof res.body.message).toBe('string');
    expect(res.body.msg).toBe(res.body.message);
    if (status === 200) expect(res.body.data.valid).toBe(false);
    else expect('valid' in res.body.data).toBe(false);
  }

  it('accepts a fresh pass token once, echoing action and captcha_args', async () => {
    const token = await mint(shop, 'login');
    const first = await validate(shop, { pass_token: token });
    expect(first.status).toBe(200);
    expect(first.body.code).toBe(0);
    expect(first.body.data).toMatchObject({
      valid: true,
      action: 'login',
      uid: null,
      captcha_args: { platform: 'web', user_ip: SOLVE_IP, referer: 'https://shop.example/login', pkg: null },
    });
    expect(first.body.data.challenge_id).toMatch(/^ch_/);
    expect(first.body.data.captcha_args.risk_score).toBe(12);
    expect('client_ip_check' in first.body.data).toBe(false);
    const second = await validate(shop, { pass_token: token });
    expectError(second, 200, 'token_already_used');
  });

  it('keeps answering token_already_used on every later validation', async () => {
    const token = await mint();
    expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    for (let i = 0; i < 3; i++)
      expectError(await validate(shop, { pass_token: token }), 200, 'token_already_used');
  });

  it('echoes the uid bound at solve time', async () => {
    const token = await mint(shop, 'login', SOLVE_IP, 'user-42');
    expect((await validate(shop, { pass_token: token })).body.data.uid).toBe('user-42');
  });

  describe('expiry', () => {
    /** A pass token whose lifetime has elapsed: sealed with a past expiry, with its matching row. */
    async function expiredToken(secondsAgo: number) {
      const id = randomId(16);
      const expiresAt = new Date(Date.now() - secondsAgo * 1000);
      await api.runtime.db.insert(passTokens).values({
        id,
        appId: shop.appId,
        challengeId: 'ch_expired',
        action: 'login',
        captchaArgs: {
          platform: 'web',
          user_ip: SOLVE_IP,
          referer: null,
          pkg: null,
          solved_at: 0,
          risk_score: 0,
        },
        issuedAt: new Date(expiresAt.getTime() - 300_000),
        expiresAt,
      });
      return {
        id,
        token: api.runtime.keys.sealPass({
          id,
          app: shop.appId,
          exp: Math.floor(expiresAt.getTime() / 1000),
        }),
      };
    }

    it('answers token_expired (HTTP 200, valid false) once the lifetime has elapsed, and consumes nothing', async () => {
      for (const secondsAgo of [1, 60, 86_400]) {
        const { id, token } = await expiredToken(secondsAgo);
        expectError(await validate(shop, { pass_token: token }), 200, 'token_expired');
        expectError(await validate(shop, { pass_token: token }), 200, 'token_expired');
        const [row] = await api.runtime.db.select().from(passTokens).where(eq(passTokens.id, id));
        expect(row!.consumedAt).toBeNull();
      }
    });

    it('also for keep_token and idempotent retries', async () => {
      const { token } = await expiredToken(5);
      expectError(await validate(shop, { pass_token: token, keep_token: true }), 200, 'token_expired');
      expectError(await validate(shop, { pass_token: token, idempotency_key: 'k1' }), 200, 'token_expired');
    });

    it('mints tokens that expire after the app pass_token_ttl', async () => {
      const shortLived = await api.createApp({ name: 'short', pass_token_ttl: 30 });
      const token = await mint(shortLived);
      const payload = api.runtime.keys.openPass(token)!;
      const now = Math.floor(Date.now() / 1000);
      expect(payload.exp - now).toBeGreaterThanOrEqual(28);
      expect(payload.exp - now).toBeLessThanOrEqual(30);
      expect((await validate(shortLived, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('token_not_found', () => {
    it('answers token_not_found (HTTP 200) for an unknown token: genuine seal, no such token', async () => {
      const token = api.runtime.keys.sealPass({
        id: randomId(16),
        app: shop.appId,
        exp: Math.floor(Date.now() / 1000) + 300,
      });
      expectError(await validate(shop, { pass_token: token }), 200, 'token_not_found');
    });

    it('answers token_not_found for forged and altered tokens, and the genuine token stays valid', async () => {
      const token = await mint();
      const [body, mac] = token.slice(3).split('.') as [string, string];
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const forgedPayload = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), exp: 4_000_000_000 }),
      ).toString('base64url');
      const forgeries = [
        `pt_${flip(body, 5)}.${mac}`,
        `pt_${body}.${flip(mac, 0)}`,
        `pt_${body}.${mac}A`,
        `pt_${body}.${mac.slice(0, -1)}`,
        `pt_${forgedPayload}.${mac}`,
        new TokenKeys(randomBytes(32)).sealPass(api.runtime.keys.openPass(token)!),
      ];
      for (const forged of forgeries) {
        expectError(await validate(shop, { pass_token: forged }), 200, 'token_not_found');
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });

    it('answers token_not_found for malformed tokens and tokens of other kinds', async () => {
      const sct = (await api.post('/v1/server/challenge/issue', { action: 'login' }, auth(shop))).body.data
        .server_token as string;
      for (const malformed of [
        'pt_',
        'pt_.',
        'pt_abc',
        'pt_a.b.c',
        'hello',
        'PT_abc.def',
        'offline_abc',
        'co_abc',
        'ch_abc',
        sct,
        'pt_😀.😀',
      ]) {
        expectError(await validate(shop, { pass_token: malformed }), 200, 'token_not_found');
      }
      // A NUL is refused at the boundary, for every field, before any token is looked at.
      expectError(await validate(shop, { pass_token: 'pt_a\u0000.b' }), 400, 'invalid_request');
    });

    it("answers token_not_found to app B for app A's token (invariant 2), which stays valid for A", async () => {
      const token = await mint(shop);
      expectError(await validate(other, { pass_token: token }), 200, 'token_not_found');
      expectError(await validate(other, { pass_token: token, keep_token: true }), 200, 'token_not_found');
      expectError(await validate(other, { pass_token: token, idempotency_key: 'k' }), 200, 'token_not_found');
      const mine = await validate(shop, { pass_token: token });
      expect(mine.status).toBe(200);
      expect(mine.body.data.valid).toBe(true);
      // ...and B cannot learn that A has since consumed it.
      expectError(await validate(other, { pass_token: token }), 200, 'token_not_found');
    });
  });

  describe('dg_ tokens', () => {
    it('answer code 0 with only valid false, degraded true, reason quota_exhausted, expired false', async () => {
      const token = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login');
      expect(token.startsWith('dg_')).toBe(true);
      const res = await validate(shop, { pass_token: token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        code: 0,
        data: { valid: false, degraded: true, reason: 'quota_exhausted', expired: false },
      });
    });

    it('answer the same every time (nothing is consumed)', async () => {
      const token = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login');
      for (let i = 0; i < 3; i++) {
        expect((await validate(shop, { pass_token: token })).body.data).toEqual({
          valid: false,
          degraded: true,
          reason: 'quota_exhausted',
          expired: false,
        });
      }
    });

    // Integrations that allow `valid || degraded` never read `expired`, so an expired
    // dg_ must be an error, not a code-0 answer a harvested token would pass with forever.
    it('are the token_expired error after 5 minutes (never code 0), and still degraded just before', async () => {
      const old = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login', Date.now() - 6 * 60_000);
      const res = await validate(shop, { pass_token: old });
      expectError(res, 200, 'token_expired');
      expect(res.body.data).toEqual({ valid: false, error: 'token_expired' });
      const recent = mintDegradedToken(
        api.runtime.keys,
        { id: shop.appId },
        'login',
        Date.now() - 4 * 60_000,
      );
      expect((await validate(shop, { pass_token: recent })).body.data.expired).toBe(false);
    });

    it('are token_not_found for another app, forged or altered', async () => {
      const token = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login');
      expectError(await validate(other, { pass_token: token }), 200, 'token_not_found');
      const [body, mac] = token.slice(3).split('.') as [string, string];
      const reapp = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), app: other.appId }),
      ).toString('base64url');
      expectError(await validate(other, { pass_token: `dg_${reapp}.${mac}` }), 200, 'token_not_found');
      expectError(await validate(shop, { pass_token: `dg_${body}.${mac.slice(1)}` }), 200, 'token_not_found');
      const foreign = mintDegradedToken(new TokenKeys(randomBytes(32)), { id: shop.appId }, 'login');
      expectError(await validate(shop, { pass_token: foreign }), 200, 'token_not_found');
    });
  });

  describe('idempotency_key', () => {
    it('gives a retry with the same key the same valid verdict', async () => {
      const token = await mint(shop, 'pay');
      const first = await validate(shop, { pass_token: token, idempotency_key: 'req-1:a' });
      const retry = await validate(shop, { pass_token: token, idempotency_key: 'req-1:a' });
      expect(first.body.data.valid).toBe(true);
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(first.body);
    });

    it('gives a different key, or none, token_already_used', async () => {
      const token = await mint();
      expect((await validate(shop, { pass_token: token, idempotency_key: 'key-a' })).body.data.valid).toBe(
        true,
      );
      expectError(
        await validate(shop, { pass_token: token, idempotency_key: 'key-b' }),
        200,
        'token_already_used',
      );
      expectError(await validate(shop, { pass_token: token }), 200, 'token_already_used');
      expect((await validate(shop, { pass_token: token, idempotency_key: 'key-a' })).body.data.valid).toBe(
        true,
      );
    });

    it('does not let a key sent only on the retry revive a token consumed without one', async () => {
      const token = await mint();
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
      expectError(
        await validate(shop, { pass_token: token, idempotency_key: 'late' }),
        200,
        'token_already_used',
      );
    });

    it('rejects a malformed key with 400 invalid_request, consuming nothing', async () => {
      const token = await mint();
      for (const key of ['', 'has space', 'x'.repeat(129), 'ünï', 42]) {
        expectError(
          await validate(shop, { pass_token: token, idempotency_key: key }),
          400,
          'invalid_request',
        );
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('keep_token', () => {
    it('verifies without consuming; a normal validation consumes afterwards', async () => {
      const token = await mint();
      for (let i = 0; i < 3; i++) {
        const peek = await validate(shop, { pass_token: token, keep_token: true });
        expect(peek.status).toBe(200);
        expect(peek.body.data).toMatchObject({ valid: true, action: 'login' });
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
      expectError(await validate(shop, { pass_token: token, keep_token: true }), 200, 'token_already_used');
    });

    it('keep_token false consumes as usual', async () => {
      const token = await mint();
      expect((await validate(shop, { pass_token: token, keep_token: false })).body.data.valid).toBe(true);
      expectError(await validate(shop, { pass_token: token }), 200, 'token_already_used');
    });

    it('must be a boolean', async () => {
      const token = await mint();
      expectError(await validate(shop, { pass_token: token, keep_token: 'true' }), 400, 'invalid_request');
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('client_ip', () => {
    async function check(creds: Creds, solveIp: string, clientIp: string) {
      const token = await mint(creds, 'login', solveIp);
      const res = await validate(creds, { pass_token: token, client_ip: clientIp });
      expect(res.status).toBe(200);
      return res.body.data as PassVerdict & { reason?: string };
    }

    it('reports match, mismatch and unverifiable under the default report policy, valid staying true', async () => {
      expect(await check(shop, SOLVE_IP, SOLVE_IP)).toMatchObject({ valid: true, client_ip_check: 'match' });
      expect(await check(shop, SOLVE_IP, '203.0.113.200')).toMatchObject({
        valid: true,
        client_ip_check: 'match',
      });
      expect(await check(shop, SOLVE_IP, '::ffff:203.0.113.9')).toMatchObject({
        valid: true,
        client_ip_check: 'match',
      });
      expect(await check(shop, '2001:db8:5::1', '2001:db8:5:9::7')).toMatchObject({
        valid: true,
        client_ip_check: 'match',
      });
      const mismatch = await check(shop, SOLVE_IP, '198.51.100.4');
      expect(mismatch).toMatchObject({ valid: true, client_ip_check: 'mismatch' });
      expect(mismatch.reason).toBeUndefined();
      expect(await check(shop, SOLVE_IP, '2001:db8::1')).toMatchObject({
        valid: true,
        client_ip_check: 'unverifiable',
      });
    });

    it('under the reject policy, a mismatch is the client_ip_mismatch verdict, its code in data.error', async () => {
      const token = await mint(strict, 'login', SOLVE_IP);
      const res = await validate(strict, { pass_token: token, client_ip: '198.51.100.4' });
      expectError(res, 200, 'client_ip_mismatch');
      expect(res.body.data).toMatchObject({
        valid: false,
        error: 'client_ip_mismatch',
        reason: 'client_ip_mismatch',
        client_ip_check: 'mismatch',
        action: 'login',
      });
      const v6 = await check(strict, '2001:db8:5::1', '2001:db8:6::1');
      expect(v6).toMatchObject({ valid: false, error: 'client_ip_mismatch' });
      // The token was spent by that attempt, as any validation spends it.
      expectError(await validate(strict, { pass_token: token }), 200, 'token_already_used');
    });

    it('under the reject policy, a match or no client_ip is valid', async () => {
      const verdict = await check(strict, SOLVE_IP, '203.0.113.99');
      expect(verdict).toMatchObject({ valid: true, client_ip_check: 'match' });
      expect(verdict.reason).toBeUndefined();
      const token = await mint(strict);
      expect((await validate(strict, { pass_token: token })).body.data.valid).toBe(true);
    });

    it('never rejects a dual-stack user (IPv4 at solve, IPv6 claimed, or the reverse)', async () => {
      expect(await check(strict, SOLVE_IP, '2001:db8::1')).toMatchObject({
        valid: true,
        client_ip_check: 'unverifiable',
      });
      expect(await check(strict, '2001:db8::1', SOLVE_IP)).toMatchObject({
        valid: true,
        client_ip_check: 'unverifiable',
      });
    });

    it('answers 400 invalid_request for a client_ip that is not an IP address, consuming nothing', async () => {
      const token = await mint();
      for (const bad of [
        'not-an-ip',
        '',
        '12345',
        '203.0.113',
        '010.0.0.1',
        '203.0.113.7 ',
        '::1%eth0',
        '1.2.3.4/24',
        7,
        null,
        ['203.0.113.7'],
      ]) {
        expectError(await validate(shop, { pass_token: token, client_ip: bad }), 400, 'invalid_request');
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('expected action', () => {
    it('accepts a token solved for the expected action', async () => {
      const res = await validate(shop, { pass_token: await mint(shop, 'login'), action: 'login' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ valid: true, action: 'login' });
    });

    it('answers token_action_mismatch for a token solved for another action, and spends it', async () => {
      const token = await mint(shop, 'register');
      const res = await validate(shop, { pass_token: token, action: 'login' });
      expectError(res, 200, 'token_action_mismatch');
      expect(res.body.data.action).toBe('register');
      expectError(await validate(shop, { pass_token: token, action: 'register' }), 200, 'token_already_used');
    });

    it('checks the action of a dg_ token too', async () => {
      const token = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'register');
      expectError(await validate(shop, { pass_token: token, action: 'login' }), 200, 'token_action_mismatch');
      const same = await validate(shop, { pass_token: token, action: 'register' });
      expect(same.body.data).toMatchObject({ valid: false, degraded: true });
    });

    it('refuses an action that is not an action name, consuming nothing', async () => {
      const token = await mint();
      for (const bad of ['', 'has space', 'x'.repeat(65), 7, null]) {
        expectError(await validate(shop, { pass_token: token, action: bad }), 400, 'invalid_request');
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('a base URL configured with a trailing slash', () => {
    it('reaches /v1/validate through //v1/validate and /v1/validate/', async () => {
      for (const path of ['//v1/validate', '/v1/validate/', '//v1//validate']) {
        const res = await api.post(path, { pass_token: await mint() }, auth(shop));
        expect(res.status, path).toBe(200);
        expect(res.body.data.valid).toBe(true);
      }
      const issued = await api.post('//v1/server/challenge/issue', { action: 'login' }, auth(shop));
      expect(issued.body.data.server_token).toMatch(/^sct_/);
    });
  });

  describe('unknown fields', () => {
    it('are refused with 400 invalid_request naming the field, consuming nothing', async () => {
      const token = await mint();
      for (const extra of [{ expected_action: 'login' }, { Action: 'login' }, { uid: 'u' }]) {
        const res = await validate(shop, { pass_token: token, ...extra });
        expectError(res, 400, 'invalid_request');
        expect(res.body.message).toContain(Object.keys(extra)[0]);
      }
      expect((await validate(shop, { pass_token: token })).body.data.valid).toBe(true);
    });
  });

  describe('caller rule: accept only valid AND the expected action', () => {
    /** What the spec tells an integrator's backend to do with a verdict. */
    const callerAccepts = (data: PassVerdict, expected: string) =>
      data.valid === true && data.action === expected;

    it('lets the caller reject a token minted for register when it expects login', async () => {
      const token = await mint(shop, 'register');
      const res = await validate(shop, { pass_token: token });
      expect(res.body.data).toMatchObject({ valid: true, action: 'register' });
      expect(callerAccepts(res.body.data, 'login')).toBe(false);
      expect(callerAccepts(res.body.data, 'register')).toBe(true);
    });

    it('echoes each action exactly as minted', async () => {
      for (const action of ['login', 'register', 'pay', 'checkout:step-2']) {
        const res = await validate(shop, { pass_token: await mint(shop, action) });
        expect(res.body.data.action).toBe(action);
      }
    });
  });
});

describe('validatePassToken (library)', () => {
  /** A database that fails the test if anything touches it. */
  const untouchable = new Proxy({} as Database, {
    get(_, property) {
      throw new Error(`the database was touched (${String(property)})`);
    },
  });
  const keys = new TokenKeys(randomBytes(32));
  const app = { id: 'app-a', clientIpPolicy: 'report' };

  it('refuses forged, foreign and expired tokens before any database read or write (invariant 4)', async () => {
    const genuine = keys.sealPass({ id: 'x', app: 'app-a', exp: Math.floor(Date.now() / 1000) + 300 });
    const cases: [string, string][] = [
      [`${genuine}x`, 'token_not_found'],
      [genuine.replace('pt_', 'pt_A'), 'token_not_found'],
      [
        new TokenKeys(randomBytes(32)).sealPass({ id: 'x', app: 'app-a', exp: 4_000_000_000 }),
        'token_not_found',
      ],
      [keys.sealPass({ id: 'x', app: 'app-b', exp: 4_000_000_000 }), 'token_not_found'],
      ['garbage', 'token_not_found'],
      [keys.sealPass({ id: 'x', app: 'app-a', exp: Math.floor(Date.now() / 1000) - 1 }), 'token_expired'],
    ];
    for (const [token, code] of cases) {
      const error = await validatePassToken(untouchable, keys, app, token).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatehouseError);
      expect((error as GatehouseError).code).toBe(code);
    }
  });
});
