import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomId } from '@gatehouse/core/crypto';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import { mintDegradedToken } from '../src/tokens/degraded-tokens.ts';
import { mintPassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, type Json, postJson, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

/*
 * The origin service's public server SDKs (Captcha-La/captchala-go, captchala-php), as their documentation
 * and sources describe them (not their code): full endpoint URLs configured by the integrator; a token
 * starting `client_` reported valid with no request; `offline_` sent to the backup URL, anything else to
 * the main one; a JSON body {pass_token, keep_token} (PHP adds client_ip when given); the answer read as
 * valid when code is 0 and data.valid (or data.ok) is true, degraded when data.degraded is true, and
 * otherwise an error named by data.error, else msg, else "unknown_error"; the status is never read.
 * Integrators allow `valid || degraded`. Their integration demo treats any non-200 as "upstream down".
 */
interface OriginResult {
  valid: boolean;
  degraded: boolean;
  clientOnly: boolean;
  offline: boolean;
  action: string | null;
  error: string | null;
  /** Not an SDK field: what the integration demo would see. */
  httpStatus: number | null;
}

class OriginLikeClient {
  readonly appKey: string;
  readonly appSecret: string;
  readonly urls: { baseUrl: string; backupUrl: string; issueUrl: string };

  constructor(
    appKey: string,
    appSecret: string,
    urls: { baseUrl: string; backupUrl: string; issueUrl: string },
  ) {
    this.appKey = appKey;
    this.appSecret = appSecret;
    this.urls = urls;
  }

  async validate(token: string, keepToken = false, clientIp?: string): Promise<OriginResult> {
    const result: OriginResult = {
      valid: false,
      degraded: false,
      clientOnly: false,
      offline: false,
      action: null,
      error: null,
      httpStatus: null,
    };
    if (token === '') return { ...result, error: 'empty_token' };
    if (token.startsWith('client_')) return { ...result, valid: true, offline: true, clientOnly: true };
    const offline = token.startsWith('offline_');
    const body: Record<string, unknown> = { pass_token: token, keep_token: keepToken };
    if (clientIp) body.client_ip = clientIp;
    const { status, json } = await this.post(offline ? this.urls.backupUrl : this.urls.baseUrl, body);
    const data = (json?.data ?? {}) as Json;
    const base = { ...result, offline, httpStatus: status };
    if (json?.code === 0 && (data.valid ?? data.ok) === true) {
      return { ...base, valid: true, action: typeof data.action === 'string' ? data.action : null };
    }
    if (data.degraded === true) return { ...base, degraded: true };
    return { ...base, error: errorName(json) };
  }

  async issueServerToken(
    action: string,
    ttl?: number,
  ): Promise<{ token: string | null; expiresIn: number | null; error: string | null }> {
    const body: Record<string, unknown> = { action };
    if (ttl !== undefined) body.ttl = ttl;
    const { json } = await this.post(this.urls.issueUrl, body);
    if (json?.code === 0 && typeof json.data?.server_token === 'string') {
      return { token: json.data.server_token, expiresIn: json.data.expires_in, error: null };
    }
    return { token: null, expiresIn: null, error: errorName(json) };
  }

  private async post(url: string, body: object): Promise<{ status: number; json: Json }> {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-App-Key': this.appKey,
        'X-App-Secret': this.appSecret,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json };
  }
}

/** data.error, else msg, else unknown_error: where those SDKs look for an error's name. */
function errorName(json: Json): string {
  const fromData = json?.data?.error;
  if (typeof fromData === 'string') return fromData;
  if (typeof json?.msg === 'string' && json.msg !== '') return json.msg;
  return 'unknown_error';
}

/** What their README tells integrators to do with a result. */
const allows = (r: OriginResult) => r.valid || r.degraded;

describe.runIf(run)("the origin service's server SDKs against Gatehouse", () => {
  let api: TestApi;
  let shop: { appKey: string; appSecret: string; appId: string };
  let strict: { appKey: string; appSecret: string; appId: string };

  beforeAll(async () => {
    api = await startTestApi();
    shop = await api.createApp({ name: 'origin-shop' });
    strict = await api.createApp({ name: 'origin-strict', client_ip_policy: 'reject' });
  });
  afterAll(() => api?.close());

  /** The integrator changed only the URLs; `base` is written as they might write it. */
  function client(app = shop, base = api.url) {
    return new OriginLikeClient(app.appKey, app.appSecret, {
      baseUrl: `${base}/v1/validate`,
      backupUrl: `${base}/api/validate`,
      issueUrl: `${base}/v1/server/challenge/issue`,
    });
  }

  async function mint(app = shop, action = 'login') {
    const row = (await api.runtime.apps.findById(app.appId))!;
    return mintPassToken(api.runtime.db, api.runtime.keys, {
      app: row,
      challengeId: `ch_${randomId(8)}`,
      action,
      captchaArgs: {
        platform: 'web',
        user_ip: '203.0.113.7',
        referer: 'https://shop.example/login',
        pkg: null,
        solved_at: Math.floor(Date.now() / 1000),
        risk_score: 10,
      },
    });
  }

  it('accept a pass token once; the replay surfaces as token_already_used, at HTTP 200', async () => {
    const sdk = client();
    const token = await mint();
    const first = await sdk.validate(token);
    expect(first).toMatchObject({ valid: true, action: 'login', error: null, httpStatus: 200 });
    const replay = await sdk.validate(token);
    expect(replay).toMatchObject({ valid: false, error: 'token_already_used', httpStatus: 200 });
    expect(allows(replay)).toBe(false);
  });

  it('name unknown, forged and expired tokens by their codes', async () => {
    const sdk = client();
    expect((await sdk.validate('pt_forged.token')).error).toBe('token_not_found');
    const expired = api.runtime.keys.sealPass({ id: randomId(16), app: shop.appId, exp: 1 });
    expect(await sdk.validate(expired)).toMatchObject({ error: 'token_expired', httpStatus: 200 });
  });

  it('name a client_ip rejection client_ip_mismatch (it had no name: unknown_error)', async () => {
    const sdk = client(strict);
    const result = await sdk.validate(await mint(strict), false, '198.51.100.4');
    expect(result).toMatchObject({ valid: false, error: 'client_ip_mismatch', httpStatus: 200 });
    expect(allows(result)).toBe(false);
  });

  it('never report a Gatehouse co_ token valid: it goes to the main API and is token_not_found', async () => {
    const result = await client().validate(`co_${randomId(16)}`);
    expect(result).toMatchObject({ valid: false, clientOnly: false, error: 'token_not_found' });
    expect(allows(result)).toBe(false);
  });

  it('see a fresh dg_ token as degraded, which their integrators allow, and an expired one as token_expired', async () => {
    const result = await client().validate(mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login'));
    expect(result).toMatchObject({ valid: false, degraded: true });
    expect(allows(result)).toBe(true);
    // After its 5 minutes it is token_expired, which they do not allow (they never read `expired`).
    const old = mintDegradedToken(api.runtime.keys, { id: shop.appId }, 'login', Date.now() - 6 * 60_000);
    const expired = await client().validate(old);
    expect(expired).toMatchObject({ degraded: false, error: 'token_expired', httpStatus: 200 });
    expect(allows(expired)).toBe(false);
  });

  it('keep_token verifies without consuming', async () => {
    const sdk = client();
    const token = await mint();
    expect((await sdk.validate(token, true)).valid).toBe(true);
    expect((await sdk.validate(token)).valid).toBe(true);
    expect((await sdk.validate(token)).error).toBe('token_already_used');
  });

  it('work with a base URL written with a trailing slash', async () => {
    const sdk = client(shop, `${api.url}/`);
    expect(await sdk.validate(await mint())).toMatchObject({ valid: true, httpStatus: 200 });
    expect((await sdk.issueServerToken('login')).token).toMatch(/^sct_/);
  });

  it('issue server tokens: a ttl above the bound is clamped, and errors reach them by code', async () => {
    const sdk = client();
    expect(await sdk.issueServerToken('login', 1800)).toMatchObject({ expiresIn: 900, error: null });
    expect(await sdk.issueServerToken('not an action!')).toMatchObject({
      token: null,
      error: 'invalid_request',
    });
    const wrong = new OriginLikeClient(shop.appKey, 'sk_wrong', {
      baseUrl: `${api.url}/v1/validate`,
      backupUrl: `${api.url}/api/validate`,
      issueUrl: `${api.url}/v1/server/challenge/issue`,
    });
    expect((await wrong.validate(await mint())).error).toBe('invalid_app_secret');
  });
});

describe.runIf(run)(
  "the origin service's server SDKs and the standby: offline_ tokens to their backup URL",
  () => {
    const store = new MemoryConsumptionStore();
    const trust = new MemoryOfflineTrust();
    let api: TestApi;
    let standby: RunningStandby;
    let app: { appKey: string; appSecret: string; appId: string };
    let sdk: OriginLikeClient;

    beforeAll(async () => {
      api = await startTestApi({}, undefined, { offlineStore: store, offlineTrust: trust });
      app = await api.createApp({ name: 'origin-offline', test_mode: true });
      const config = loadStandbyConfig({
        STANDBY_PROBE_INTERVAL_MS: '50',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'origin-standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      });
      standby = await startStandby(config, { store, trust, logger: pino({ level: 'silent' }) });
      // The integrator's configuration: the main API, and a fallback host as their backup URL.
      sdk = new OriginLikeClient(app.appKey, app.appSecret, {
        baseUrl: `${api.url}/v1/validate`,
        backupUrl: `${standby.urls.fallback}/api/validate`,
        issueUrl: `${api.url}/v1/server/challenge/issue`,
      });
    });
    afterAll(async () => {
      await standby?.close();
      await api?.close();
    });

    /** What the web widget does on the standby's end-user side during an outage. */
    async function offlineToken() {
      const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
        app_key: app.appKey,
        action: 'login',
      });
      expect(init.status).toBe(200);
      const pow = await solvePuzzle(init.body.data.pow as Puzzle);
      const submit = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
        app_key: app.appKey,
        challenge_id: init.body.data.challenge_id,
        challenge: init.body.data.challenge,
        pow,
      });
      expect(submit.status).toBe(200);
      return submit.body.data.pass_token as string;
    }

    it('validate an offline_ token once at the backup URL, during the outage and after recovery', async () => {
      standby.health.setMode('serve');
      const during = await offlineToken();
      const late = await offlineToken();
      expect(during).toMatch(/^offline_/);
      const first = await sdk.validate(during);
      expect(first).toMatchObject({ valid: true, offline: true, action: 'login', httpStatus: 200 });
      expect(await sdk.validate(during)).toMatchObject({ valid: false, error: 'token_already_used' });
      // The main API is back: the backup URL still validates a token minted during the outage, once.
      standby.health.setMode('auto');
      expect(await sdk.validate(late)).toMatchObject({ valid: true, offline: true });
      expect(await sdk.validate(late)).toMatchObject({ valid: false, error: 'token_already_used' });
    });

    it("the fallback checks an expected action as the main API does (Gatehouse's SDKs send it there too)", async () => {
      standby.health.setMode('serve');
      const [match, other] = [await offlineToken(), await offlineToken()];
      const auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
      const url = `${standby.urls.fallback}/api/validate`;
      expect((await postJson(url, { pass_token: match, action: 'login' }, auth)).body.data).toMatchObject({
        valid: true,
        action: 'login',
      });
      const mismatch = await postJson(url, { pass_token: other, action: 'pay' }, auth);
      expect(mismatch.status).toBe(200);
      expect(mismatch.body).toMatchObject({
        code: -1,
        error: 'token_action_mismatch',
        data: { valid: false, error: 'token_action_mismatch', action: 'login' },
      });
      expect((await postJson(url, { pass_token: other }, auth)).body.error).toBe('token_already_used');
      standby.health.setMode('auto');
    });
  },
);
