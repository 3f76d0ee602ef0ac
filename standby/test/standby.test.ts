import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { offlineInitAnswer, offlineSubmitAnswer } from '@gatehouse/core/challenges/wire';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesOpenApi } from '../../api/test/openapi-assert.ts';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

const FAST_PROBES = {
  STANDBY_PROBE_INTERVAL_MS: '50',
  STANDBY_PROBE_TIMEOUT_MS: '200',
  STANDBY_FAIL_AFTER: '3',
  STANDBY_RECOVER_AFTER: '2',
};

async function waitFor(what: string, check: () => boolean, ms = 5000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('standby: service_online, failover, offline tokens', () => {
  const store = new MemoryConsumptionStore();
  const trust = new MemoryOfflineTrust();
  let api: TestApi;
  let standby: RunningStandby;
  let app: { appKey: string; appSecret: string; appId: string };
  let strictApp: { appKey: string; appSecret: string; appId: string };
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApi({}, undefined, { offlineStore: store, offlineTrust: trust });
    app = await api.createApp({ name: 'continuity', test_mode: true });
    strictApp = await api.createApp({ name: 'strict' });
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    const config = loadStandbyConfig({
      ...FAST_PROBES,
      MAIN_API_URL: api.url,
      STANDBY_BYPASS_PORT: '0',
      STANDBY_FALLBACK_PORT: '0',
      STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
      STANDBY_SYNC_TOKEN: api.runtime.syncToken,
    });
    standby = await startStandby(config, { store, trust, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  async function offlineToken(appKey = app.appKey) {
    const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: appKey,
      action: 'login',
    });
    expect(init.status).toBe(200);
    // The widget reads a standby's answers by the shared wire schemas: each answer must be one.
    const challenge = offlineInitAnswer.parse(init.body.data);
    const pow = await solvePuzzle(challenge.pow as Puzzle);
    const submit = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
      app_key: appKey,
      challenge_id: challenge.challenge_id,
      challenge: challenge.challenge,
      pow,
    });
    expect(submit.status).toBe(200);
    return offlineSubmitAnswer.parse(submit.body.data).pass_token;
  }

  it('answers service_online (HTTP 503, code -1) on both roles while the main API is up', async () => {
    expect(standby.snapshots.status()).toMatchObject({ loaded: true, apps: 2 });
    const bypass = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: app.appKey,
      action: 'login',
    });
    const fallback = await postJson(
      `${standby.urls.fallback}/api/validate`,
      { pass_token: 'offline_x.y' },
      auth,
    );
    for (const res of [bypass, fallback]) {
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: -1, error: 'service_online' });
      expect(res.body.message).toMatch(/main API is online/);
    }
  });

  it('serves when the operator says so, and goes back online on `auto` while the main API is up', async () => {
    const token = api.runtime.syncToken;
    const set = (mode: string) =>
      postJson(`${standby.urls.fallback}/internal/v1/mode`, { mode }, { Authorization: `Bearer ${token}` });
    expect(
      (
        await postJson(
          `${standby.urls.fallback}/internal/v1/mode`,
          { mode: 'serve' },
          { Authorization: 'Bearer wrong' },
        )
      ).status,
    ).toBe(401);
    expect((await set('serve')).body.data).toMatchObject({ serving: true, mode: 'serve' });
    expect((await set('auto')).body.data).toMatchObject({ serving: false, main: 'up' });
  });

  it('issues offline_ tokens while serving; each is accepted once across the standby and the main API', async () => {
    standby.health.setMode('serve');
    const first = await offlineToken();
    expect(first).toMatch(/^offline_/);
    const verdict = await postJson(
      `${standby.urls.fallback}/api/validate`,
      { pass_token: first, client_ip: '127.0.0.1' },
      auth,
    );
    expect(verdict.status).toBe(200);
    expect(verdict.body.data).toMatchObject({
      valid: true,
      action: 'login',
      offline: true,
      uid: null,
      client_ip_check: 'match',
      captcha_args: { platform: 'web', user_ip: '127.0.0.1' },
    });
    expect(
      (await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: first }, auth)).body.error,
    ).toBe('token_already_used');
    // The main API honours the standby's record...
    expect((await api.post('/v1/validate', { pass_token: first }, auth)).body.error).toBe(
      'token_already_used',
    );
    // ...and validates a fresh offline token itself, once.
    const second = await offlineToken();
    const atMain = await api.post('/v1/validate', { pass_token: second }, auth);
    expect(atMain.body.data).toMatchObject({ valid: true, offline: true });
    expectMatchesOpenApi('/v1/validate', 'post', atMain);
    expect(
      (await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: second }, auth)).body.error,
    ).toBe('token_already_used');
    standby.health.setMode('auto');
  });

  it('offline verification is a real check: proof-of-work and a picture (click or select by default) for ordinary apps', async () => {
    standby.health.setMode('serve');
    const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: strictApp.appKey,
      action: 'login',
    });
    expect(offlineInitAnswer.parse(init.body.data)).toMatchObject({
      tier: 'hard',
      offline: true,
      image: { alternative: true },
    });
    // The main API's default kinds: the slide only for an app that names it (offline-kinds.test.ts).
    expect(['click', 'select']).toContain(init.body.data.image.kind);
    const pow = await solvePuzzle(init.body.data.pow as Puzzle);
    const body = {
      app_key: strictApp.appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
      pow,
    };
    const noAnswer = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, body);
    expect(noAnswer.status).toBe(422);
    expect(noAnswer.body.error).toBe('invalid_answer');
    const forged = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
      ...body,
      // Never the genuine challenge: about 1 in 300 already ends in "AA".
      challenge: `${body.challenge.slice(0, -2)}${body.challenge.endsWith('AA') ? 'BB' : 'AA'}`,
    });
    expect(forged.body.error).toBe('challenge_not_found');
    standby.health.setMode('auto');
  });

  it('a refused proof-of-work burns the offline challenge: no second draw of the spot check', async () => {
    // The test-mode app: no slide, three attempts, so only the burn can refuse the second submit.
    standby.health.setMode('serve');
    const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: app.appKey,
      action: 'login',
    });
    const pow = await solvePuzzle(init.body.data.pow as Puzzle);
    const body = {
      app_key: app.appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
    };
    // No nonce at all: malformed, refused without a hash, and the challenge's one draw is spent.
    const empty = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
      ...body,
      pow: { nonces: [] },
    });
    expect(empty.status).toBe(422);
    expect(empty.body.message).toContain('0 attempts left');
    // The real solution afterwards is refused too, although the counter still allows a third attempt.
    const real = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, { ...body, pow });
    expect(real.status).toBe(422);
    expect(real.body.error).toBe('invalid_answer');
    // A fresh challenge with the real solution passes: the refusal above is the burn, not the solution.
    const again = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: app.appKey,
      action: 'login',
    });
    const solved = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
      app_key: app.appKey,
      challenge_id: again.body.data.challenge_id,
      challenge: again.body.data.challenge,
      pow: await solvePuzzle(again.body.data.pow as Puzzle),
    });
    expect(solved.status).toBe(200);
    standby.health.setMode('auto');
  });

  it('refuses what it cannot vouch for: wrong secrets, pt_ tokens, forged offline tokens, unknown apps', async () => {
    standby.health.setMode('serve');
    const url = `${standby.urls.fallback}/api/validate`;
    expect(
      (await postJson(url, { pass_token: 'offline_x.y' }, { ...auth, 'X-App-Secret': 'sk_wrong' })).body
        .error,
    ).toBe('invalid_app_secret');
    expect(
      (await postJson(url, { pass_token: 'offline_x.y' }, { ...auth, 'X-App-Key': 'ak_nobody' })).body.error,
    ).toBe('invalid_app_key');
    expect((await postJson(url, { pass_token: 'pt_abc.def' }, auth)).body.error).toBe('token_not_found');
    const token = await offlineToken();
    expect((await postJson(url, { pass_token: `${token.slice(0, -2)}xx` }, auth)).body.error).toBe(
      'token_not_found',
    );
    const other = { 'X-App-Key': strictApp.appKey, 'X-App-Secret': strictApp.appSecret };
    expect((await postJson(url, { pass_token: token }, other)).body.error).toBe('token_not_found');
    expect((await postJson(url, { pass_token: 42 }, auth)).status).toBe(400);
    standby.health.setMode('auto');
  });

  it('takes over when the main API really fails, and steps back when it recovers (with hysteresis)', async () => {
    await api.pause();
    await waitFor('the standby to serve', () => standby.health.serving);
    const token = await offlineToken();
    const heldBack = await offlineToken();
    expect(
      (await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: token }, auth)).body.data.valid,
    ).toBe(true);
    await api.resume();
    await waitFor('the standby to step back', () => !standby.health.serving);
    // Back online: anything but an offline_ token minted during the outage gets service_online...
    expect(
      (await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: 'pt_abc.def' }, auth)).body
        .error,
    ).toBe('service_online');
    // ...while those keep their verdict here whatever the main API's state (DESIGN.md).
    expect(
      (await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: token }, auth)).body.error,
    ).toBe('token_already_used');
    const late = await postJson(`${standby.urls.fallback}/api/validate`, { pass_token: heldBack }, auth);
    expect(late.status).toBe(200);
    expect(late.body.data).toMatchObject({ valid: true, offline: true });
  });
});

describe('standby without a snapshot fails closed', () => {
  it('answers service_unavailable instead of guessing', async () => {
    const config = loadStandbyConfig({
      MAIN_API_URL: 'http://127.0.0.1:9',
      STANDBY_BYPASS_PORT: '0',
      STANDBY_FALLBACK_PORT: '0',
      STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
      STANDBY_SYNC_TOKEN: 'x'.repeat(32),
    });
    const lonely = await startStandby(config, { logger: pino({ level: 'silent' }) });
    try {
      lonely.health.setMode('serve');
      const res = await postJson(
        `${lonely.urls.fallback}/api/validate`,
        { pass_token: 'offline_a.b' },
        { 'X-App-Key': 'ak_x', 'X-App-Secret': 'sk_x' },
      );
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('service_unavailable');
      expect((await fetch(`${lonely.urls.fallback}/readyz`)).status).toBe(503);
    } finally {
      await lonely.close();
    }
  });
});
