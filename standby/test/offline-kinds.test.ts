import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Json, postJson, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import {
  createPuzzle,
  difficultyForScore,
  nativeHasher,
  type Puzzle,
  solvePuzzle,
} from '@gatehouse/core/pow';
import { openJson, sealJson } from '@gatehouse/core/sealed';
import { offlineKeysFor } from '@gatehouse/core/standby-keys';
import { OFFLINE_TOKEN_TTL_SECONDS } from '@gatehouse/core/tokens';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYBOARD_POW_SECONDS } from '../../api/src/challenges/priced-pow.ts';
import { DEFAULT_IMAGE_KINDS } from '../../api/src/risk/policy.ts';
import { expectMatchesOpenApi } from '../../api/test/openapi-assert.ts';
import { loadStandbyConfig } from '../src/config.ts';
import { STANDBY_DEFAULT_KINDS } from '../src/offline-challenges.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/*
 * The image challenges during an outage, over real HTTP against a real main API and a real standby: the
 * standby's offline challenge is the main API's (click and select by default, the slide only for an app that names
 * it in `image_kinds`, from the snapshot), checked by core's verifyChallenge for its kind, one answer, the
 * keyboard's proof-of-work and the accessible alternative as on the main API; and the `offline_` token
 * says how it was earned (risk reasons), read by the main API's /v1/validate as `risk` and by the
 * fallback's /api/validate as `captcha_args.risk_reasons`. Proofs-of-work are priced down for speed.
 */
const hasher = nativeHasher();
const solve = (puzzle: unknown) => solvePuzzle(puzzle as Puzzle, hasher ? { hasher } : {});

describe('the standby serves the main API’s image kinds and says how each offline_ token was earned', () => {
  const store = new MemoryConsumptionStore();
  const trust = new MemoryOfflineTrust();
  let api: TestApi;
  let standby: RunningStandby;
  type TestApp = { appKey: string; appSecret: string; appId: string; auth: Record<string, string> };
  let plain: TestApp;
  let slideOnly: TestApp;
  let selectOnly: TestApp;
  let clickOnly: TestApp;
  let testMode: TestApp;

  beforeAll(async () => {
    api = await startTestApi({}, undefined, { offlineStore: store, offlineTrust: trust });
    const made = async (settings: Parameters<TestApi['createApp']>[0]) => {
      const a = await api.createApp(settings);
      return { ...a, auth: { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret } };
    };
    plain = await made({ name: 'standby-default-policy' });
    slideOnly = await made({ name: 'standby-slide', risk_policy: { image_kinds: ['slide'] } });
    selectOnly = await made({ name: 'standby-select', risk_policy: { image_kinds: ['select'] } });
    clickOnly = await made({ name: 'standby-click', risk_policy: { image_kinds: ['click'] } });
    testMode = await made({ name: 'standby-test-mode', test_mode: true });
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_PROBE_INTERVAL_MS: '60000',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-kinds-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        ALTERNATIVE_POW_SECONDS: '0.05',
        KEYBOARD_POW_SECONDS: '0.05',
      }),
      { store, trust, logger: pino({ level: 'silent' }) },
    );
    // The outage, as the operator declares it (the main API stays up for the snapshot and /v1/validate).
    standby.health.setMode('serve');
  }, 60_000);
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  async function init(a: TestApp) {
    const res = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: a.appKey,
      action: 'login',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data as Json;
    return { data, ids: { app_key: a.appKey, challenge_id: data.challenge_id, challenge: data.challenge } };
  }
  /** What the standby sealed into its challenge (test-only knowledge: the region's keys from the snapshot). */
  function sealed(a: TestApp, challenge: string): Json {
    for (const key of standby.snapshots.keyring.challengeKeys()) {
      const opened = openJson(key, challenge, a.appId) as Json | null;
      if (opened) return opened;
    }
    throw new Error('the standby challenge did not open');
  }
  /** The right answer to a click or select challenge, as the widget sends it from a pointer. */
  function rightAnswer(a: TestApp, data: Json): unknown {
    const opened = sealed(a, data.challenge);
    if (data.image.kind === 'select') return opened.img.indices;
    // A person's pace: the first symbol after 0.6 s, then one every 0.4 s.
    return (opened.img.targets as { x: number; y: number }[]).map((t, i) => ({
      x: t.x,
      y: t.y,
      t: 600 + 400 * i,
    }));
  }
  const submit = (ids: object, body: object) =>
    postJson(`${standby.urls.bypass}/v1/challenge/submit`, { ...ids, ...body });
  const validateAtMain = (token: string, a: TestApp) =>
    api.post('/v1/validate', { pass_token: token }, a.auth);
  const validateAtFallback = (token: string, a: TestApp) =>
    postJson(`${standby.urls.fallback}/api/validate`, { pass_token: token }, a.auth);

  it('an app with the default policy gets click and select, never the slide (the main API’s defaults)', async () => {
    expect([...STANDBY_DEFAULT_KINDS]).toEqual([...DEFAULT_IMAGE_KINDS]);
    // The keyboard's price too is the main API's (KEYBOARD_POW_SECONDS, the same variable).
    expect(loadStandbyConfig({}).keyboardSeconds).toBe(KEYBOARD_POW_SECONDS);
    expect(() => loadStandbyConfig({ KEYBOARD_POW_SECONDS: 'soon' })).toThrow(/KEYBOARD_POW_SECONDS/);
    const kinds = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const { data } = await init(plain);
      expect(data).toMatchObject({ tier: 'hard', offline: true, image: { alternative: true } });
      kinds.add(data.image.kind);
    }
    // 16 draws of two kinds: both seen unless 1 in 32,768.
    expect([...kinds].sort()).toEqual(['click', 'select']);
  }, 60_000);

  it('honours the image_kinds an app names in its policy (from the snapshot): the slide only when opted in', async () => {
    for (const [a, kind] of [
      [slideOnly, 'slide'],
      [selectOnly, 'select'],
      [clickOnly, 'click'],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const { data } = await init(a);
        expect(data.image.kind).toBe(kind);
        expect(data.image.view.kind).toBe(kind);
        expect(sealed(a, data.challenge).kind).toBe(kind);
      }
    }
  }, 60_000);

  for (const app of ['click', 'select'] as const) {
    it(`${app}: the right answer earns one offline_ token whose reasons say standby, the tier and the kind, at the main API and the fallback`, async () => {
      const a = app === 'click' ? clickOnly : selectOnly;
      const { data, ids } = await init(a);
      expect(data.image.keyboard_pow).toMatchObject({ count: expect.any(Number) });
      const pow = await solve(data.pow);
      const ok = await submit(ids, { pow, answer: rightAnswer(a, data) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const token = ok.body.data.pass_token as string;
      expect(token).toMatch(/^offline_/);
      // Solved once: the same answer again is refused.
      const again = await submit(ids, { pow, answer: rightAnswer(a, data) });
      expect(again.status).toBeGreaterThanOrEqual(400);
      expect(again.body.data?.pass_token).toBeUndefined();

      const reasons = ['standby', 'tier.hard', `challenge.${app}`];
      const atMain = await validateAtMain(token, a);
      expect(atMain.status, JSON.stringify(atMain.body)).toBe(200);
      expect(atMain.body.data).toMatchObject({ valid: true, offline: true, risk: { score: 40, reasons } });
      expectMatchesOpenApi('/v1/validate', 'post', atMain);
      // A second token, at the fallback: the same reasons in captcha_args.
      const second = await init(a);
      const res = await submit(second.ids, {
        pow: await solve(second.data.pow),
        answer: rightAnswer(a, second.data),
      });
      const atFallback = await validateAtFallback(res.body.data.pass_token, a);
      expect(atFallback.body.data).toMatchObject({
        valid: true,
        captcha_args: { risk_score: 40, risk_reasons: reasons },
      });
    }, 60_000);
  }

  it('one answer per picture: a wrong answer spends the challenge, the right one afterwards earns nothing', async () => {
    for (const a of [clickOnly, selectOnly, slideOnly]) {
      const { data, ids } = await init(a);
      const pow = await solve(data.pow);
      const wrong = await submit(ids, { pow, answer: [] });
      expect(wrong.status).toBe(422);
      expect(wrong.body).toMatchObject({ error: 'invalid_answer' });
      expect(wrong.body.message).toContain('0 attempts left');
      if (data.image.kind === 'slide') continue;
      const late = await submit(ids, { pow, answer: rightAnswer(a, data) });
      expect(late.status).toBeGreaterThanOrEqual(400);
      expect(late.body.error).toBe('challenge_expired');
    }
  }, 60_000);

  it('a keyboard answer ({input, picks, pow}) needs its proof-of-work, as on the main API, and says challenge.keyboard', async () => {
    for (const a of [clickOnly, selectOnly]) {
      const refused = await init(a);
      const noProof = await submit(refused.ids, {
        pow: await solve(refused.data.pow),
        answer: { input: 'keyboard', picks: rightAnswer(a, refused.data) },
      });
      expect(noProof.status).toBe(422);
      expect(noProof.body.error).toBe('invalid_answer');

      const { data, ids } = await init(a);
      const [pow, kpow] = await Promise.all([solve(data.pow), solve(data.image.keyboard_pow)]);
      const ok = await submit(ids, {
        pow,
        answer: { input: 'keyboard', picks: rightAnswer(a, data), pow: kpow },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const verdict = await validateAtMain(ok.body.data.pass_token, a);
      expect(verdict.body.data.risk.reasons).toEqual([
        'standby',
        'tier.hard',
        `challenge.${data.image.kind}`,
        'challenge.keyboard',
      ]);
    }
  }, 60_000);

  it('the accessible alternative is reachable from a click or select challenge, and its pass says challenge.alternative', async () => {
    const { data, ids } = await init(plain);
    expect(['click', 'select']).toContain(data.image.kind);
    const alt = await postJson(`${standby.urls.bypass}/v1/challenge/alternative`, ids);
    expect(alt.status, JSON.stringify(alt.body)).toBe(200);
    const [pow, altPow] = await Promise.all([solve(data.pow), solve(alt.body.data.pow)]);
    const ok = await submit(ids, { pow, answer: { alternative: alt.body.data.ticket, pow: altPow } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const verdict = await validateAtMain(ok.body.data.pass_token, plain);
    expect(verdict.body.data).toMatchObject({
      valid: true,
      offline: true,
      risk: {
        score: 40,
        reasons: ['standby', 'tier.hard', `challenge.${data.image.kind}`, 'challenge.alternative'],
      },
    });
  }, 60_000);

  it('a page with a long address still gets a token every checker accepts (at most 1,024 characters): the referer is cut to its origin then', async () => {
    const referer = `https://shop.example/checkout?${'utm_campaign=spring&'.repeat(60)}x=1`;
    const res = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: testMode.appKey,
      action: 'login',
      referer,
    });
    const data = res.body.data as Json;
    const ok = await submit(
      { app_key: testMode.appKey, challenge_id: data.challenge_id, challenge: data.challenge },
      { pow: await solve(data.pow) },
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const token = ok.body.data.pass_token as string;
    expect(token.length).toBeLessThanOrEqual(1024);
    const verdict = await validateAtFallback(token, testMode);
    expect(verdict.status, JSON.stringify(verdict.body)).toBe(200);
    expect(verdict.body.data).toMatchObject({
      valid: true,
      captcha_args: { referer: 'https://shop.example' },
    });
    // A usual one is kept whole.
    const usual = 'https://shop.example/login?next=%2Fcart';
    const again = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: testMode.appKey,
      action: 'login',
      referer: usual,
    });
    const solved = await submit(
      {
        app_key: testMode.appKey,
        challenge_id: again.body.data.challenge_id,
        challenge: again.body.data.challenge,
      },
      { pow: await solve(again.body.data.pow) },
    );
    const kept = await validateAtFallback(solved.body.data.pass_token, testMode);
    expect(kept.body.data.captcha_args.referer).toBe(usual);
  });

  it('a test-mode app: no picture, the reasons say the invisible tier', async () => {
    const { data, ids } = await init(testMode);
    expect(data.image).toBeUndefined();
    const ok = await submit(ids, { pow: await solve(data.pow) });
    expect(ok.status).toBe(200);
    const verdict = await validateAtFallback(ok.body.data.pass_token, testMode);
    expect(verdict.body.data.captcha_args.risk_reasons).toEqual(['standby', 'tier.invisible']);
  });

  it('a challenge sealed before the standby drew other kinds (no `kind`) is still a slide: refused as one, its alternative still passes', async () => {
    const key = standby.snapshots.keyring.challengeKeys()[0]!;
    const pow = createPuzzle(difficultyForScore(40));
    const id = 'ch_oldslide0001';
    // Exactly what a standby sealed before this change: the slide's answer as `img`, no `kind`, no `kpow`.
    const challenge = sealJson(
      key,
      {
        id,
        app: plain.appId,
        act: 'login',
        ip: '127.0.0.1',
        plat: 'web',
        ref: null,
        exp: Math.floor(Date.now() / 1000) + 60,
        pow,
        img: { x: 120 },
      },
      plain.appId,
    );
    const ids = { app_key: plain.appKey, challenge_id: id, challenge };
    const alt = await postJson(`${standby.urls.bypass}/v1/challenge/alternative`, ids);
    expect(alt.status, JSON.stringify(alt.body)).toBe(200);
    const [solved, altPow] = await Promise.all([solve(pow), solve(alt.body.data.pow)]);
    const ok = await submit(ids, { pow: solved, answer: { alternative: alt.body.data.ticket, pow: altPow } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const verdict = await validateAtFallback(ok.body.data.pass_token, plain);
    expect(verdict.body.data.captcha_args.risk_reasons).toEqual([
      'standby',
      'tier.hard',
      'challenge.slide',
      'challenge.alternative',
    ]);
  });

  it('an offline_ token minted before tokens carried reasons still validates, once, at the main API and the fallback', async () => {
    const entry = standby.snapshots.keyring.active();
    if (!entry) throw new Error('no active standby key');
    const keys = offlineKeysFor(entry);
    const iat = Math.floor(Date.now() / 1000);
    // Exactly the payload a standby minted before this change (no `rsn`).
    const legacy = (id: string) =>
      keys.seal({
        id,
        app: plain.appId,
        act: 'login',
        iat,
        exp: iat + OFFLINE_TOKEN_TTL_SECONDS,
        ip: '127.0.0.1',
        plat: 'web',
        ref: null,
        score: 40,
      });
    const atMain = await validateAtMain(legacy('ch_legacy_main01'), plain);
    expect(atMain.status, JSON.stringify(atMain.body)).toBe(200);
    expect(atMain.body.data).toMatchObject({
      valid: true,
      offline: true,
      risk: { score: 40, reasons: ['standby'] },
    });
    expectMatchesOpenApi('/v1/validate', 'post', atMain);
    expect((await validateAtMain(legacy('ch_legacy_main01'), plain)).body.error).toBe('token_already_used');
    const atFallback = await validateAtFallback(legacy('ch_legacy_fall01'), plain);
    expect(atFallback.status, JSON.stringify(atFallback.body)).toBe(200);
    expect(atFallback.body.data).toMatchObject({
      valid: true,
      captcha_args: { risk_score: 40, risk_reasons: ['standby'] },
    });
  });
});
