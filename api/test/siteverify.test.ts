import { randomUUID } from 'node:crypto';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintDegradedToken } from '../src/tokens/degraded-tokens.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

const run = await databaseAvailable();

/*
 * Each vendor's backend below is written from that vendor's public server-side documentation, not from
 * Gatehouse's code: the same request (form, FormData or JSON), the same fields, the same checks on the
 * JSON answer. Only the siteverify URL and the secret are Gatehouse's.
 */

/** Cloudflare's Workers example: a FormData body (multipart), `outcome.success`; retries with an idempotency_key. */
async function turnstileBackend(url: string, secret: string, token: string, ip?: string, key?: string) {
  const formData = new FormData();
  formData.append('secret', secret);
  formData.append('response', token);
  if (ip) formData.append('remoteip', ip);
  if (key) formData.append('idempotency_key', key);
  const result = await fetch(url, { body: formData, method: 'POST' });
  return { status: result.status, outcome: (await result.json()) as Json };
}

/** Cloudflare's JSON variant of the same call. */
async function turnstileJsonBackend(url: string, secret: string, token: string) {
  const result = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ secret, response: token }),
  });
  return (await result.json()) as Json;
}

/** reCAPTCHA's documented POST (form-encoded); a v3 backend checks success, action and score. */
async function recaptchaBackend(url: string, secret: string, token: string, ip?: string) {
  const params = new URLSearchParams({ secret, response: token });
  if (ip) params.set('remoteip', ip);
  const result = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: params.toString(),
  });
  const outcome = (await result.json()) as Json;
  const accepted = outcome.success === true && outcome.action === 'login' && outcome.score >= 0.5;
  return { status: result.status, outcome, accepted };
}

/** hCaptcha's documented POST (form-encoded), with the optional sitekey check. */
async function hcaptchaBackend(url: string, secret: string, token: string, sitekey?: string, ip?: string) {
  const params = new URLSearchParams({ secret, response: token });
  if (sitekey) params.set('sitekey', sitekey);
  if (ip) params.set('remoteip', ip);
  const result = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: params,
  });
  return { status: result.status, outcome: (await result.json()) as Json };
}

describe.runIf(run)('siteverify-compatible endpoints', () => {
  let api: TestApi;
  let app: { appKey: string; appSecret: string; appId: string };
  let other: { appKey: string; appSecret: string; appId: string };
  let turnstile: string;
  let recaptcha: string;
  let hcaptcha: string;

  beforeAll(async () => {
    api = await startTestApi();
    app = await api.createApp({ name: 'vendor', test_mode: true });
    other = await api.createApp({ name: 'other', test_mode: true });
    turnstile = `${api.url}/turnstile/v0/siteverify`;
    recaptcha = `${api.url}/recaptcha/api/siteverify`;
    hcaptcha = `${api.url}/siteverify`;
  });
  afterAll(() => api?.close());

  /** A real pass token: init (with Turnstile's cdata when given), proof-of-work, submit. */
  async function solve(action = 'login', extra: Record<string, string> = {}, appKey = app.appKey) {
    const init = await api.post(
      '/v1/challenge/init',
      { app_key: appKey, action, referer: 'https://shop.example/login', ...extra },
      { 'User-Agent': 'Mozilla/5.0 Chrome/131.0.0.0', 'Accept-Language': 'en' },
    );
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    const pow = await solvePuzzle(init.body.data.pow as Puzzle);
    const submit = await api.post('/v1/challenge/submit', {
      app_key: appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
      pow,
    });
    expect(submit.status).toBe(200);
    return submit.body.data.pass_token as string;
  }

  describe('Turnstile: /turnstile/v0/siteverify', () => {
    it('accepts a token once with the documented fields, then timeout-or-duplicate', async () => {
      const token = await solve('login', { cdata: 'session-42' });
      const first = await turnstileBackend(turnstile, app.appSecret, token, '203.0.113.9');
      expect(first.status).toBe(200);
      expect(first.outcome).toMatchObject({
        success: true,
        'error-codes': [],
        hostname: 'shop.example',
        action: 'login',
        cdata: 'session-42',
      });
      expect(new Date(first.outcome.challenge_ts).getTime()).toBeGreaterThan(Date.now() - 60_000);
      const again = await turnstileBackend(turnstile, app.appSecret, token);
      expect(again.status).toBe(200);
      expect(again.outcome).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] });
    });

    it('answers a retry with the same idempotency_key with the same result, spending nothing more', async () => {
      const token = await solve();
      const key = randomUUID();
      const first = await turnstileBackend(turnstile, app.appSecret, token, undefined, key);
      const retry = await turnstileBackend(turnstile, app.appSecret, token, undefined, key);
      expect(first.outcome.success).toBe(true);
      expect(retry.outcome).toEqual(first.outcome);
      const otherKey = await turnstileBackend(turnstile, app.appSecret, token, undefined, randomUUID());
      expect(otherKey.outcome['error-codes']).toEqual(['timeout-or-duplicate']);
    });

    it('takes JSON too, and an empty cdata when the page gave none', async () => {
      const outcome = await turnstileJsonBackend(turnstile, app.appSecret, await solve());
      expect(outcome).toMatchObject({ success: true, cdata: '', action: 'login' });
    });

    it('names missing and invalid inputs with the vendor codes', async () => {
      const token = await solve();
      expect((await turnstileBackend(turnstile, '', token)).outcome['error-codes']).toEqual([
        'missing-input-secret',
      ]);
      expect((await turnstileBackend(turnstile, app.appSecret, '')).outcome['error-codes']).toEqual([
        'missing-input-response',
      ]);
      const wrong = await turnstileBackend(turnstile, `${app.appSecret}x`, token);
      expect(wrong.outcome).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'] });
      expect(
        (await turnstileBackend(turnstile, app.appSecret, 'pt_forged.x')).outcome['error-codes'],
      ).toEqual(['invalid-input-response']);
      // Another app's secret cannot spend this app's token, which stays valid for its own app.
      expect((await turnstileBackend(turnstile, other.appSecret, token)).outcome['error-codes']).toEqual([
        'invalid-input-response',
      ]);
      expect((await turnstileBackend(turnstile, app.appSecret, token)).outcome.success).toBe(true);
      const badKey = await turnstileBackend(turnstile, app.appSecret, await solve(), undefined, 'not a key');
      expect(badKey.outcome['error-codes']).toEqual(['bad-request']);
    });
  });

  describe('reCAPTCHA: /recaptcha/api/siteverify', () => {
    it('accepts a token once with v3 score and action, then timeout-or-duplicate', async () => {
      const token = await solve('login');
      const first = await recaptchaBackend(recaptcha, app.appSecret, token, '203.0.113.9');
      expect(first.status).toBe(200);
      expect(first.accepted).toBe(true);
      expect(first.outcome).toMatchObject({ success: true, hostname: 'shop.example', action: 'login' });
      expect(first.outcome.score).toBeGreaterThanOrEqual(0);
      expect(first.outcome.score).toBeLessThanOrEqual(1);
      expect(typeof first.outcome.challenge_ts).toBe('string');
      const again = await recaptchaBackend(recaptcha, app.appSecret, token);
      expect(again.accepted).toBe(false);
      expect(again.outcome).toEqual({ success: false, 'error-codes': ['timeout-or-duplicate'] });
    });

    it('lets a v3 backend refuse a token solved for another action', async () => {
      const res = await recaptchaBackend(recaptcha, app.appSecret, await solve('register'));
      expect(res.outcome).toMatchObject({ success: true, action: 'register' });
      expect(res.accepted).toBe(false);
    });

    it('fails closed on a degraded token, flagging it', async () => {
      const dg = mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login');
      const res = await recaptchaBackend(recaptcha, app.appSecret, dg);
      expect(res.outcome).toMatchObject({ success: false, degraded: true });
      expect(res.accepted).toBe(false);
    });

    it('answers invalid-input-secret and missing-input-response', async () => {
      const res = await recaptchaBackend(recaptcha, 'sk_nope', await solve());
      expect(res.outcome).toEqual({ success: false, 'error-codes': ['invalid-input-secret'] });
      const none = await recaptchaBackend(recaptcha, app.appSecret, '');
      expect(none.outcome['error-codes']).toEqual(['missing-input-response']);
    });
  });

  describe('hCaptcha: /siteverify', () => {
    it('accepts a token once, then already-seen-response', async () => {
      const token = await solve();
      const first = await hcaptchaBackend(hcaptcha, app.appSecret, token, app.appKey, '203.0.113.9');
      expect(first.status).toBe(200);
      expect(first.outcome).toMatchObject({ success: true, hostname: 'shop.example', credit: false });
      expect(typeof first.outcome.challenge_ts).toBe('string');
      const again = await hcaptchaBackend(hcaptcha, app.appSecret, token);
      expect(again.outcome).toEqual({ success: false, 'error-codes': ['already-seen-response'] });
    });

    it('answers sitekey-secret-mismatch for another app key, spending nothing', async () => {
      const token = await solve();
      const res = await hcaptchaBackend(hcaptcha, app.appSecret, token, other.appKey);
      expect(res.outcome).toEqual({ success: false, 'error-codes': ['sitekey-secret-mismatch'] });
      expect((await hcaptchaBackend(hcaptcha, app.appSecret, token, app.appKey)).outcome.success).toBe(true);
    });

    it('answers expired-input-response and invalid-remoteip', async () => {
      const expired = api.runtime.keys.sealPass({ id: 'gone', app: app.appId, exp: 1 });
      const res = await hcaptchaBackend(hcaptcha, app.appSecret, expired);
      expect(res.outcome['error-codes']).toEqual(['expired-input-response']);
      const ip = await hcaptchaBackend(hcaptcha, app.appSecret, await solve(), undefined, 'not-an-ip');
      expect(ip.outcome['error-codes']).toEqual(['invalid-remoteip']);
    });
  });

  it('finds the app by the secret of a rotation grace period, and not after a rotation without one', async () => {
    const rotating = await api.createApp({ name: 'rotating', test_mode: true });
    const token = await solve('login', {}, rotating.appKey);
    await api.runtime.apps.rotateSecret(rotating.appKey, 600);
    expect((await hcaptchaBackend(hcaptcha, rotating.appSecret, token)).outcome.success).toBe(true);
    const { secret } = await api.runtime.apps.rotateSecret(rotating.appKey, 0);
    const later = await solve('login', {}, rotating.appKey);
    expect((await hcaptchaBackend(hcaptcha, rotating.appSecret, later)).outcome['error-codes']).toEqual([
      'invalid-input-secret',
    ]);
    expect((await hcaptchaBackend(hcaptcha, secret, later)).outcome.success).toBe(true);
  });

  it('answers only POST: 405 with Allow: POST for other methods, and OPTIONS says so', async () => {
    for (const url of [turnstile, recaptcha, hcaptcha]) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await fetch(url, { method });
        expect(res.status, `${method} ${url}`).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
      const options = await fetch(url, { method: 'OPTIONS' });
      expect(options.headers.get('allow')).toBe('POST');
    }
  });

  it('never answers 5xx to malformed bodies', async () => {
    for (const [type, body] of [
      ['application/json', '{"secret": 7, "response": ["a"]}'],
      ['application/json', '[]'],
      ['text/plain', 'secret=x&response=y'],
      ['multipart/form-data; boundary=zz', '--zz\r\nbroken'],
      ['application/x-www-form-urlencoded', 'secret=a&secret=b&response=c'],
    ] as const) {
      const res = await fetch(turnstile, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status, `${type} ${body}`).toBeLessThan(500);
      const answer = await res.json();
      expect(answer).toMatchObject({ success: false });
      expectMatchesOpenApi('/turnstile/v0/siteverify', 'post', { status: res.status, body: answer });
    }
  });

  it('answers as the OpenAPI document says, for each vendor, success and failure', async () => {
    for (const path of ['/turnstile/v0/siteverify', '/recaptcha/api/siteverify', '/siteverify']) {
      for (const response of [
        await solve(),
        'pt_forged.x',
        mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login'),
      ]) {
        const res = await api.post(path, { secret: app.appSecret, response });
        expect(res.status).toBe(200);
        expectMatchesOpenApi(path, 'post', res);
      }
    }
  });
});
