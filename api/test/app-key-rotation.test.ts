import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, findApp } from '../../standby/src/apps.ts';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { SnapshotKeeper } from '../../standby/src/snapshot.ts';
import { startStandby } from '../../standby/src/standby.ts';
import {
  databaseAvailable,
  type Json,
  postJson,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * Rotating an app's public key with grace, through real HTTP on the vitest project's database.
 * During the grace the previous key names the app everywhere a key is presented (challenge init and
 * submit, validation, server-token issue, the admin API, the standby's snapshot); after it, nowhere.
 */
const run = await databaseAvailable();

describe.runIf(run)(`rotating an app key with grace (${TEST_DATABASE})`, () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  const adminAuth = () => ({ Authorization: `Bearer ${api.runtime.adminToken}` });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function rotateKey(appKey: string, body?: unknown) {
    return api.post(`/admin/v1/apps/${appKey}/rotate-key`, body ?? '', adminAuth());
  }

  /** A pass token solved headless against the main API with the key given (test mode: trivial work). */
  async function passToken(appKey: string): Promise<{ status: number; body: Json; token?: string }> {
    const init = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });
    if (init.status !== 200) return init;
    const submit = await api.post('/v1/challenge/submit', {
      app_key: appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
      pow: await solvePuzzle(init.body.data.pow as Puzzle),
    });
    return { ...submit, token: submit.body.data?.pass_token };
  }

  const validate = (token: string, appKey: string, secret: string) =>
    api.post('/v1/validate', { pass_token: token }, { 'X-App-Key': appKey, 'X-App-Secret': secret });
  const issueServerToken = (appKey: string, secret: string) =>
    api.post(
      '/v1/server/challenge/issue',
      { action: 'login' },
      { 'X-App-Key': appKey, 'X-App-Secret': secret },
    );

  it('gives a new key; the old one keeps working for init, submit, validation, server tokens and the admin API during the grace', async () => {
    const { appKey: oldKey, appSecret } = await api.createApp({ name: 'rotating', test_mode: true });
    const before = await passToken(oldKey);
    expect(before.status).toBe(200);

    const rotated = await rotateKey(oldKey, { grace_seconds: 3600 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expectMatchesOpenApi('/admin/v1/apps/{appKey}/rotate-key', 'post', rotated);
    const newKey = rotated.body.data.app_key as string;
    expect(newKey).toMatch(/^ak_/);
    expect(newKey).not.toBe(oldKey);
    expect(rotated.body.data.previous_app_key).toBe(oldKey);
    const until = Date.parse(rotated.body.data.key_rotation_grace_until);
    expect(until).toBeGreaterThan(Date.now() + 3500_000);
    expect(until).toBeLessThan(Date.now() + 3700_000);
    expect(rotated.body.data).not.toHaveProperty('app_secret');

    // A token minted under the old key before the rotation validates under the new key (bound to the app).
    const early = await validate(before.token!, newKey, appSecret);
    expect(early.body.data?.valid, JSON.stringify(early.body)).toBe(true);

    for (const key of [oldKey, newKey]) {
      const minted = await passToken(key);
      expect(minted.status, `${key}: ${JSON.stringify(minted.body)}`).toBe(200);
      // Each token validates once, whichever key the server presents.
      const other = key === oldKey ? newKey : oldKey;
      expect((await validate(minted.token!, other, appSecret)).body.data?.valid).toBe(true);
      expect((await issueServerToken(key, appSecret)).status).toBe(200);
    }

    const byOld = await fetch(`${api.url}/admin/v1/apps/${oldKey}`, { headers: adminAuth() });
    expect(((await byOld.json()) as Json).data.app_key).toBe(newKey);
  });

  it('refuses the old key everywhere once the grace has ended; the new key and tokens issued before keep working', async () => {
    const { appKey: oldKey, appSecret } = await api.createApp({ name: 'short grace', test_mode: true });
    const rotated = await rotateKey(oldKey, { grace_seconds: 1 });
    const newKey = rotated.body.data.app_key as string;
    const inGrace = await passToken(oldKey);
    expect(inGrace.status).toBe(200);

    await sleep(2_600); // past the grace and the repository's 2 s cache
    const init = await api.post('/v1/challenge/init', { app_key: oldKey, action: 'login' });
    expect(init.status).toBe(401);
    expect(init.body.error).toBe('invalid_app_key');
    expect((await validate('pt_garbage', oldKey, appSecret)).body.error).toBe('invalid_app_key');
    expect((await issueServerToken(oldKey, appSecret)).body.error).toBe('invalid_app_key');
    const admin = await fetch(`${api.url}/admin/v1/apps/${oldKey}`, { headers: adminAuth() });
    expect(admin.status).toBe(404);
    const view = await fetch(`${api.url}/admin/v1/apps/${newKey}`, { headers: adminAuth() });
    const data = ((await view.json()) as Json).data;
    expect(data.previous_app_key).toBeNull();
    expect(data.key_rotation_grace_until).toBeNull();

    // The token minted with the old key during the grace is still the app's for its lifetime.
    expect((await validate(inGrace.token!, newKey, appSecret)).body.data?.valid).toBe(true);
    expect((await passToken(newKey)).status).toBe(200);
  });

  it('with grace_seconds 0 the old key stops at once; the default grace is one day', async () => {
    const { appKey: a } = await api.createApp({ name: 'no grace', test_mode: true });
    const now = await rotateKey(a, { grace_seconds: 0 });
    expect(now.body.data.previous_app_key).toBeNull();
    expect((await api.post('/v1/challenge/init', { app_key: a, action: 'login' })).body.error).toBe(
      'invalid_app_key',
    );
    const { appKey: b } = await api.createApp({ name: 'default grace' });
    const day = await rotateKey(b);
    expect(day.status).toBe(200);
    const until = Date.parse(day.body.data.key_rotation_grace_until);
    expect(Math.abs(until - Date.now() - 86_400_000)).toBeLessThan(60_000);
  });

  it("never lets another app's credentials validate a token, through either of its keys", async () => {
    const a = await api.createApp({ name: 'A', test_mode: true });
    const b = await api.createApp({ name: 'B', test_mode: true });
    const bNew = (await rotateKey(b.appKey, { grace_seconds: 3600 })).body.data.app_key as string;
    const aOld = a.appKey;
    const aNew = (await rotateKey(aOld, { grace_seconds: 3600 })).body.data.app_key as string;
    const token = (await passToken(aOld)).token!;
    for (const key of [b.appKey, bNew]) {
      const res = await validate(token, key, b.appSecret);
      expect(res.body.data?.valid).not.toBe(true);
      expect(res.body.error).toBe('token_not_found');
    }
    // A's old key with B's secret is refused as a wrong secret, not taken for B.
    expect((await validate(token, aOld, b.appSecret)).body.error).toBe('invalid_app_secret');
    expect((await validate(token, aNew, a.appSecret)).body.data?.valid).toBe(true);
  });

  it("hCaptcha siteverify takes the previous key as sitekey during the grace, and the console's usage follows the key", async () => {
    const { appKey: oldKey, appSecret } = await api.createApp({ name: 'sitekey', test_mode: true });
    const before = await passToken(oldKey);
    const newKey = (await rotateKey(oldKey, { grace_seconds: 3600 })).body.data.app_key as string;
    const hcaptcha = async (token: string, sitekey: string) => {
      const res = await fetch(`${api.url}/siteverify`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret: appSecret, response: token, sitekey }),
      });
      return (await res.json()) as Json;
    };
    expect((await hcaptcha(before.token!, oldKey)).success).toBe(true);
    expect((await passToken(oldKey)).status).toBe(200);
    expect((await hcaptcha((await passToken(newKey)).token!, newKey)).success).toBe(true);
    const other = await api.createApp({ name: 'other' });
    expect((await hcaptcha((await passToken(newKey)).token!, other.appKey))['error-codes']).toEqual([
      'sitekey-secret-mismatch',
    ]);

    const usage = await fetch(`${api.url}/admin/v1/apps/${newKey}/usage?hours=1`, { headers: adminAuth() });
    const counts = ((await usage.json()) as Json).data.hours[0].counts;
    // One challenge before the rotation and one after under the old key, two under the new one.
    expect(counts['challenge.invisible']).toBe(4);
  });

  it('refuses an app managed by a custom resource, bad bodies and unknown apps with 4xx', async () => {
    const { appKey } = await api.createApp({
      name: 'managed',
      managed_by: { kind: 'App', namespace: 'payments', name: 'checkout' },
    });
    const managed = await rotateKey(appKey);
    expect(managed.status).toBe(400);
    expect(managed.body.message).toContain('payments/checkout');
    const { appKey: plain } = await api.createApp({ name: 'plain' });
    expect((await rotateKey(plain, { grace_seconds: -1 })).status).toBe(400);
    expect((await rotateKey(plain, { grace: 10 })).status).toBe(400);
    expect((await rotateKey('ak_doesnotexist', {})).status).toBe(404);
    const anonymous = await api.post(`/admin/v1/apps/${plain}/rotate-key`, {});
    expect(anonymous.status).toBe(401);
  });

  it("the standby's snapshot carries the previous key until its grace ends, and the standby honours it", async () => {
    const { appKey: oldKey, appSecret, appId } = await api.createApp({ name: 'standby', test_mode: true });
    const newKey = (await rotateKey(oldKey, { grace_seconds: 2 })).body.data.app_key as string;
    const keeper = new SnapshotKeeper(
      join(mkdtempSync(join(tmpdir(), 'key-rotation-')), 'snapshot.json'),
      api.url,
      () => api.runtime.syncToken,
      'default',
    );
    await keeper.refresh();
    const entry = keeper.snapshot!.apps.find((a) => a.id === appId)!;
    expect(entry.app_key).toBe(newKey);
    expect(entry.previous_app_key).toBe(oldKey);
    for (const key of [oldKey, newKey]) {
      expect(findApp(keeper, key).id).toBe(appId);
      expect(authenticate(keeper, key, appSecret).id).toBe(appId);
    }

    await sleep(2_200);
    // The copy it holds stops honouring the old key by itself (an outage can last past the grace)...
    expect(() => findApp(keeper, oldKey)).toThrow(/invalid_app_key|Invalid App Key/);
    expect(() => authenticate(keeper, oldKey, appSecret)).toThrow();
    expect(findApp(keeper, newKey).id).toBe(appId);
    // ...and the next snapshot no longer carries it.
    await keeper.refresh();
    const later = keeper.snapshot!.apps.find((a) => a.id === appId)!;
    expect(later.previous_app_key).toBeNull();
    expect(keeper.loadFromDisk()).toBe(true);
  });

  it('a running standby serves challenges under the previous key during the grace and refuses it after', async () => {
    const { appKey: oldKey } = await api.createApp({ name: 'standby http', test_mode: true });
    const newKey = (await rotateKey(oldKey, { grace_seconds: 2 })).body.data.app_key as string;
    const standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_PROBE_INTERVAL_MS: '60000',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'key-rotation-standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { logger: pino({ level: 'silent' }) },
    );
    try {
      standby.health.setMode('serve');
      const init = (key: string) =>
        postJson(`${standby.urls.bypass}/v1/challenge/init`, { app_key: key, action: 'login' });
      for (const key of [oldKey, newKey]) expect((await init(key)).status, key).toBe(200);
      await sleep(2_200);
      const late = await init(oldKey);
      expect(late.status).toBe(401);
      expect(late.body.error).toBe('invalid_app_key');
      expect((await init(newKey)).status).toBe(200);
    } finally {
      await standby.close();
    }
  });
});
