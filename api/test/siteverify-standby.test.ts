import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import { databaseAvailable, type Json, postJson, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

const PATHS = {
  turnstile: '/turnstile/v0/siteverify',
  recaptcha: '/recaptcha/api/siteverify',
  hcaptcha: '/siteverify',
} as const;
type Vendor = keyof typeof PATHS;

/** A vendor backend's documented call: form-encoded `secret`, `response` and the optional fields. */
async function siteverify(url: string, fields: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return { status: res.status, outcome: (await res.json()) as Json };
}

/*
 * The siteverify paths on the standby's fallback role: one verify URL for a backend, through an outage
 * and after it. The main API and the standby share the store of spent offline_ tokens and the outage log
 * (in memory here; Redis between processes in siteverify-failover.browser.test.ts, where the main API is
 * killed).
 */
describe.runIf(run)('siteverify on the fallback host', () => {
  const store = new MemoryConsumptionStore();
  const trust = new MemoryOfflineTrust();
  let api: TestApi;
  let standby: RunningStandby;
  let app: { appKey: string; appSecret: string; appId: string };
  let strict: { appKey: string; appSecret: string; appId: string };
  let fallback: string;

  beforeAll(async () => {
    api = await startTestApi({}, undefined, { offlineStore: store, offlineTrust: trust });
    app = await api.createApp({ name: 'vendor-standby', test_mode: true });
    strict = await api.createApp({ name: 'vendor-standby-strict' });
    standby = await startStandby(
      loadStandbyConfig({
        STANDBY_PROBE_INTERVAL_MS: '50',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        STANDBY_FAIL_AFTER: '2',
        STANDBY_RECOVER_AFTER: '2',
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-siteverify-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { store, trust, logger: pino({ level: 'silent' }) },
    );
    fallback = standby.urls.fallback!;
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  /** An offline_ token from the bypass role (serving by the operator's switch: an outage is recorded). */
  async function offlineToken(extra: Record<string, string> = {}, appKey = app.appKey) {
    standby.health.setMode('serve');
    try {
      const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
        app_key: appKey,
        action: 'login',
        referer: 'https://shop.example/login',
        ...extra,
      });
      expect(init.status, JSON.stringify(init.body)).toBe(200);
      const submit = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
        app_key: appKey,
        challenge_id: init.body.data.challenge_id,
        challenge: init.body.data.challenge,
        pow: await solvePuzzle(init.body.data.pow as Puzzle),
      });
      expect(submit.status, JSON.stringify(submit.body)).toBe(200);
      return submit.body.data.pass_token as string;
    } finally {
      standby.health.setMode('auto');
    }
  }

  /** A pt_ token from the main API. */
  async function passToken() {
    const init = await api.post('/v1/challenge/init', {
      app_key: app.appKey,
      action: 'login',
      referer: 'https://shop.example/login',
    });
    expect(init.status).toBe(200);
    const submit = await api.post('/v1/challenge/submit', {
      app_key: app.appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
      pow: await solvePuzzle(init.body.data.pow as Puzzle),
    });
    expect(submit.status).toBe(200);
    return submit.body.data.pass_token as string;
  }

  it('verifies an offline_ token at each vendor path, with cdata, action and a test app passing score', async () => {
    const answers = {} as Record<Vendor, Json>;
    for (const vendor of Object.keys(PATHS) as Vendor[]) {
      const token = await offlineToken({ cdata: 'sess-12345' });
      const { status, outcome } = await siteverify(fallback + PATHS[vendor], {
        secret: app.appSecret,
        response: token,
        remoteip: '127.0.0.1',
        ...(vendor === 'hcaptcha' ? { sitekey: app.appKey } : {}),
      });
      expect(status).toBe(200);
      answers[vendor] = outcome;
    }
    expect(answers.turnstile).toMatchObject({
      success: true,
      'error-codes': [],
      hostname: 'shop.example',
      action: 'login',
      cdata: 'sess-12345',
      messages: [],
    });
    // A test app passes any threshold: reCAPTCHA's 1.0 is very likely human, hCaptcha's 0.0 safe.
    expect(answers.recaptcha).toMatchObject({
      success: true,
      hostname: 'shop.example',
      action: 'login',
      score: 1,
    });
    expect(answers.hcaptcha).toMatchObject({
      success: true,
      hostname: 'shop.example',
      score: 0,
      credit: false,
    });
    // Google and hCaptcha document yyyy-MM-dd'T'HH:mm:ssZZ (no milliseconds); Turnstile's examples have them.
    expect(answers.recaptcha.challenge_ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(answers.hcaptcha.challenge_ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(answers.turnstile.challenge_ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('carries cdata through the main API too (an offline_ token verified there after the outage)', async () => {
    const token = await offlineToken({ cdata: 'sess-67890' });
    const atMain = await siteverify(api.url + PATHS.turnstile, { secret: app.appSecret, response: token });
    expect(atMain.outcome).toMatchObject({ success: true, cdata: 'sess-67890', action: 'login' });
  });

  it('a token verified at the main API is spent at the standby, and the other way round', async () => {
    const first = await offlineToken();
    expect(
      (await siteverify(api.url + PATHS.turnstile, { secret: app.appSecret, response: first })).outcome,
    ).toMatchObject({ success: true });
    const replayed = await siteverify(fallback + PATHS.turnstile, { secret: app.appSecret, response: first });
    expect(replayed.outcome).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] });

    const second = await offlineToken();
    expect(
      (await siteverify(fallback + PATHS.hcaptcha, { secret: app.appSecret, response: second })).outcome,
    ).toMatchObject({ success: true });
    const again = await siteverify(api.url + PATHS.hcaptcha, { secret: app.appSecret, response: second });
    expect(again.outcome).toMatchObject({ success: false, 'error-codes': ['already-seen-response'] });
  });

  it('answers a retry with the same idempotency_key alike at both hosts, spending nothing more', async () => {
    const token = await offlineToken();
    const key = randomUUID();
    const fields = { secret: app.appSecret, response: token, idempotency_key: key };
    const first = await siteverify(fallback + PATHS.turnstile, fields);
    const retried = await siteverify(api.url + PATHS.turnstile, fields);
    expect(first.outcome).toMatchObject({ success: true });
    expect(retried.outcome).toMatchObject({ success: true });
    const other = await siteverify(fallback + PATHS.turnstile, { ...fields, idempotency_key: randomUUID() });
    expect(other.outcome['error-codes']).toEqual(['timeout-or-duplicate']);
  });

  it('several verifiers at once, at both hosts: exactly one success per token', async () => {
    for (let round = 0; round < 3; round++) {
      const token = await offlineToken();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          siteverify((i % 2 ? api.url : fallback) + PATHS.recaptcha, {
            secret: app.appSecret,
            response: token,
          }),
        ),
      );
      expect(answers.filter((a) => a.outcome.success === true)).toHaveLength(1);
      for (const a of answers.filter((x) => x.outcome.success !== true)) {
        expect(a.outcome['error-codes']).toEqual(['timeout-or-duplicate']);
      }
    }
  });

  it('forwards a pt_ token to the main API while it is up: verified once, then a duplicate', async () => {
    const token = await passToken();
    const first = await siteverify(fallback + PATHS.turnstile, { secret: app.appSecret, response: token });
    expect(first).toMatchObject({ status: 200, outcome: { success: true, action: 'login' } });
    const again = await siteverify(fallback + PATHS.turnstile, { secret: app.appSecret, response: token });
    expect(again.outcome['error-codes']).toEqual(['timeout-or-duplicate']);
    // The main API's own answers come through as they are: a wrong secret, a missing response.
    expect(
      (await siteverify(fallback + PATHS.hcaptcha, { secret: 'nope', response: 'pt_x' })).outcome,
    ).toEqual({ success: false, 'error-codes': ['invalid-input-secret'] });
  });

  it('a MAIN_API_URL that leads back to a fallback host is a 503, never a circle', async () => {
    const looped = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: fallback,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-siteverify-loop-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { store, trust, logger: pino({ level: 'silent' }) },
    );
    try {
      // The looped host forwards to the fallback host, which never forwards a forwarded request again.
      const token = await passToken();
      const looping = await siteverify(`${looped.urls.fallback}${PATHS.turnstile}`, {
        secret: app.appSecret,
        response: token,
      });
      expect(looping.status).toBe(503);
      expect(looping.outcome).toEqual({ success: false, 'error-codes': ['internal-error'], messages: [] });
      // Nothing was spent on the way: the token still passes at the right host, once.
      expect(
        (await siteverify(fallback + PATHS.turnstile, { secret: app.appSecret, response: token })).outcome,
      ).toMatchObject({ success: true });
    } finally {
      await looped.close();
    }
  });

  it('while the main API is away: offline_ tokens verified, a pt_ token a 503 that never passes', async () => {
    const offline = await offlineToken();
    const pass = await passToken();
    await api.pause();
    try {
      await vi.waitFor(() => expect(standby.health.status().main).toBe('down'), { timeout: 10_000 });
      const ok = await siteverify(fallback + PATHS.recaptcha, { secret: app.appSecret, response: offline });
      expect(ok).toMatchObject({ status: 200, outcome: { success: true, action: 'login' } });
      const main = await siteverify(fallback + PATHS.recaptcha, { secret: app.appSecret, response: pass });
      expect(main.status).toBe(503);
      expect(main.outcome).toEqual({ success: false, 'error-codes': ['bad-request'] });
    } finally {
      await api.resume();
      await vi.waitFor(() => expect(standby.health.status().main).toBe('up'), { timeout: 10_000 });
    }
    // Back: the pt_ token was never spent; the offline_ one was.
    expect(
      (await siteverify(fallback + PATHS.recaptcha, { secret: app.appSecret, response: pass })).outcome,
    ).toMatchObject({ success: true });
    expect(
      (await siteverify(api.url + PATHS.recaptcha, { secret: app.appSecret, response: offline })).outcome,
    ).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] });
  });

  it("refuses at the standby what the main API refuses: another app's secret or sitekey, a wrong secret", async () => {
    const token = await offlineToken();
    const cases: [Record<string, string>, string[]][] = [
      [{ secret: strict.appSecret, response: token }, ['invalid-input-response']],
      [{ secret: 'sk_wrong', response: token }, ['invalid-input-secret']],
      [{ secret: app.appSecret, response: token, sitekey: strict.appKey }, ['sitekey-secret-mismatch']],
      [{ secret: app.appSecret, response: `${token.slice(0, -2)}xx` }, ['invalid-input-response']],
    ];
    for (const [fields, codes] of cases) {
      expect((await siteverify(fallback + PATHS.hcaptcha, fields)).outcome['error-codes']).toEqual(codes);
    }
    // None of them spent it.
    expect(
      (await siteverify(fallback + PATHS.hcaptcha, { secret: app.appSecret, response: token })).outcome,
    ).toMatchObject({ success: true });
  });

  it('clock skew: a standby up to 30 s ahead or behind mints tokens both hosts accept once; 10 min behind, expired', async () => {
    const realNow = Date.now.bind(Date);
    const skewed = async (ms: number) => {
      const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
      try {
        return await offlineToken();
      } finally {
        spy.mockRestore();
      }
    };
    for (const ms of [25_000, -25_000]) {
      const token = await skewed(ms);
      const first = await siteverify(api.url + PATHS.turnstile, { secret: app.appSecret, response: token });
      expect(first.outcome, `skew ${ms}`).toMatchObject({ success: true });
      const replay = await siteverify(fallback + PATHS.turnstile, { secret: app.appSecret, response: token });
      expect(replay.outcome['error-codes']).toEqual(['timeout-or-duplicate']);
    }
    const stale = await skewed(-600_000);
    for (const host of [fallback, api.url]) {
      const late = await siteverify(host + PATHS.hcaptcha, { secret: app.appSecret, response: stale });
      expect(late.outcome).toEqual({ success: false, 'error-codes': ['expired-input-response'] });
    }
  });

  it('answers refused bodies in the vendor shape at both hosts: 413, 415, 400 for a NUL or a bad idempotency_key', async () => {
    for (const host of [api.url, fallback]) {
      for (const vendor of Object.keys(PATHS) as Vendor[]) {
        const url = host + PATHS[vendor];
        const big = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `secret=${'a'.repeat(40_000)}&response=x`,
        });
        expect(big.status, `${host} ${vendor}`).toBe(413);
        expect(await big.json()).toMatchObject({ success: false, 'error-codes': ['bad-request'] });
        const latin1 = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=latin1' },
          body: 'secret=a&response=b',
        });
        expect(latin1.status).toBe(415);
        expect(await latin1.json()).toMatchObject({ success: false, 'error-codes': ['bad-request'] });
        const nul = await siteverify(url, { secret: `${app.appSecret}\u0000`, response: 'x' });
        expect(nul).toMatchObject({
          status: 400,
          outcome: { success: false, 'error-codes': ['bad-request'] },
        });
        const key = await siteverify(url, {
          secret: app.appSecret,
          response: 'x',
          idempotency_key: 'not-a-uuid',
        });
        expect(key).toMatchObject({
          status: 200,
          outcome: { success: false, 'error-codes': ['bad-request'] },
        });
      }
    }
  });
});
