import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageRollup } from '../src/console/usage.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * What the console reads, over real HTTP: usage per hour from the rollups (filled by real challenges,
 * answers and validations), recent risk decisions with reasons, a risk preview through the engine, the
 * standby hosts' state, and apps declared by a custom resource.
 */
const run = await databaseAvailable();

describe.runIf(run)('console admin endpoints', () => {
  let api: TestApi;
  let standby: Server;
  let admin: Record<string, string>;

  beforeAll(async () => {
    // One standby host that answers its /status, and one address where nothing listens.
    standby = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ role: 'bypass', main: 'up', mode: 'auto', serving: false, region: 'eu' }));
    });
    await new Promise<void>((done) => standby.listen(0, '127.0.0.1', done));
    const standbyUrl = `http://127.0.0.1:${(standby.address() as AddressInfo).port}`;
    api = await startTestApi({
      STANDBY_BYPASS_URLS: standbyUrl,
      STANDBY_FALLBACK_URLS: 'http://127.0.0.1:9',
    });
    admin = { authorization: `Bearer ${api.runtime.adminToken}` };
  });
  afterAll(async () => {
    await api?.close();
    standby?.close();
  });

  // Every answer is checked against the served OpenAPI document as it goes.
  const get = async (path: string, headers = admin) => {
    const res = await fetch(api.url + path, { headers });
    const answer = { status: res.status, body: (await res.json()) as Json, headers: res.headers };
    expectMatchesOpenApi(path.split('?')[0]!, 'get', answer);
    return answer;
  };

  it('counts challenges by tier, answers and validations by verdict and token kind, per app and hour', async () => {
    const app = await api.createApp({ name: 'charted', test_mode: true });
    const refused = await api.createApp({
      name: 'refused',
      risk_policy: { invisible_below: 0, image_below: 0, high: 'reject' },
    });
    const auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    for (let i = 0; i < 2; i++) {
      const solved = await solveChallenge({
        baseUrl: api.url,
        appKey: app.appKey,
        action: 'login',
        clientOnlyFallback: false,
      });
      expect((await api.post('/v1/validate', { pass_token: solved.passToken }, auth)).body.data.valid).toBe(
        true,
      );
      if (i === 0) {
        const again = await api.post('/v1/validate', { pass_token: solved.passToken }, auth);
        expect(again.body.data).toMatchObject({ valid: false, error: 'token_already_used' });
      }
    }
    const rejected = await api.post('/v1/challenge/init', { app_key: refused.appKey, action: 'login' });
    expect(rejected.body.error).toBe('request_rejected');

    const usage = await get(`/admin/v1/apps/${app.appKey}/usage?hours=24`);
    expect(usage.status).toBe(200);
    expect(usage.body.data.hours).toHaveLength(24);
    const now = usage.body.data.hours.at(-1).counts;
    expect(now).toMatchObject({
      'challenge.invisible': 2,
      'submit.solved': 2,
      'validate.valid': 2,
      'validate.token_already_used': 1,
      'token.pt': 3,
    });
    expect(usage.body.data.quota).toMatchObject({ used: 2, monthly_quota: 10_000 });
    const other = await get(`/admin/v1/apps/${refused.appKey}/usage?hours=1`);
    expect(other.body.data.hours[0].counts).toEqual({ 'challenge.reject': 1 });

    // The overview: every app's sums, under its current key and the one it had before a rotation.
    await api.runtime.apps.rotateKey(app.appKey, 600);
    const overview = await get('/admin/v1/usage?hours=24');
    expect(overview.status).toBe(200);
    const row = (key: string) => overview.body.data.apps.find((a: Json) => a.app_key === key);
    const rotated = overview.body.data.apps.find((a: Json) => a.name === 'charted');
    expect(rotated.app_key).not.toBe(app.appKey);
    expect(rotated.counts).toMatchObject({ 'challenge.invisible': 2, 'validate.valid': 2 });
    expect(row(refused.appKey).counts).toEqual({ 'challenge.reject': 1 });
    expect(overview.body.data.totals['challenge.reject']).toBeGreaterThanOrEqual(1);
    expect(overview.body.data.totals['validate.valid']).toBeGreaterThanOrEqual(2);
    expect((await get('/admin/v1/usage?hours=0')).status).toBe(400);
  });

  it('lists recent risk decisions, newest first, with the rules that scored them', async () => {
    const app = await api.createApp({ name: 'decided' });
    await fetch(`${api.url}/v1/challenge/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.0' },
      body: JSON.stringify({ app_key: app.appKey, action: 'signup' }),
    });
    const { body } = await get(`/admin/v1/risk/decisions?app_key=${app.appKey}`);
    expect(body.data.decisions).toHaveLength(1);
    const [decision] = body.data.decisions;
    expect(decision).toMatchObject({ app_key: app.appKey, action: 'signup', ip: '127.0.0.1' });
    expect(decision.reasons.length).toBeGreaterThan(0);
    expect(decision.reasons.some((r: string) => r.startsWith('headers.'))).toBe(true);
    expect((await get('/admin/v1/risk/decisions?limit=1')).body.data.decisions).toHaveLength(1);
  });

  it('previews what a visitor would get under the stored or a proposed policy, without counting them', async () => {
    const app = await api.createApp({ name: 'previewed' });
    const preview = async (body: object) => {
      const answer = await api.post('/admin/v1/risk/preview', body, admin);
      expectMatchesOpenApi('/admin/v1/risk/preview', 'post', answer);
      return answer;
    };
    const browser = {
      app_key: app.appKey,
      user_agent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
      accept_language: 'en-GB,en;q=0.9',
    };
    const calm = await preview(browser);
    expect(calm.status).toBe(200);
    expect(calm.body.data).toMatchObject({ tier: 'invisible', image_kinds: [] });
    // Previews are judged as first requests: asking again many times changes nothing.
    for (let i = 0; i < 30; i++) await preview(browser);
    expect((await preview(browser)).body.data.score).toBe(calm.body.data.score);
    const bot = await preview({
      ...browser,
      user_agent: 'python-requests/2.31',
      signals: { webdriver: true },
    });
    expect(bot.body.data.score).toBeGreaterThan(calm.body.data.score);
    expect(bot.body.data.reasons.join(' ')).toMatch(/webdriver/);
    const forced = await preview({
      ...browser,
      risk_policy: { invisible_below: 0, image_below: 101, image_kinds: ['click'] },
    });
    expect(forced.body.data).toMatchObject({ tier: 'image', image_kinds: ['click'] });
    const bad = await preview({ ...browser, risk_policy: { invisible_below: 90, image_below: 10 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
    // Previews are not visitors: the app's usage and the decisions list did not move.
    const usage = await get(`/admin/v1/apps/${app.appKey}/usage?hours=1`);
    expect(usage.body.data.hours[0].counts).toEqual({});
    expect((await get(`/admin/v1/risk/decisions?app_key=${app.appKey}`)).body.data.decisions).toEqual([]);
  });

  it("reports each standby host's own state, and unknown for one it cannot reach", async () => {
    const { body } = await get('/admin/v1/standby/status');
    const [bypass, fallback] = body.data.hosts;
    expect(bypass).toMatchObject({
      role: 'bypass',
      reachable: true,
      main: 'up',
      region: 'eu',
      serving: false,
    });
    expect(fallback).toMatchObject({ role: 'fallback', reachable: false, state: 'unknown' });
  });

  it('keeps managed_by, the custom resource an app is declared by, on create and update', async () => {
    const created = await api.post(
      '/admin/v1/apps',
      { name: 'from-cr', managed_by: { kind: 'App', namespace: 'shop', name: 'checkout' } },
      admin,
    );
    expect(created.status).toBe(201);
    expect(created.body.data.managed_by).toEqual({ kind: 'App', namespace: 'shop', name: 'checkout' });
    const key = created.body.data.app_key;
    const listed = (await get('/admin/v1/apps')).body.data.apps.find((a: Json) => a.app_key === key);
    expect(listed.managed_by).toEqual({ kind: 'App', namespace: 'shop', name: 'checkout' });
    const res = await fetch(`${api.url}/admin/v1/apps/${key}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ managed_by: null }),
    });
    expect(((await res.json()) as Json).data.managed_by).toBeNull();
    const bad = await api.post(
      '/admin/v1/apps',
      { name: 'x', managed_by: { kind: 'App', name: 'n', extra: 1 } },
      admin,
    );
    expect(bad.status).toBe(400);
  });

  it('refuses every console endpoint without the admin token', async () => {
    for (const path of [
      '/admin/v1/risk/decisions',
      '/admin/v1/standby/status',
      '/admin/v1/apps/ak_x/usage',
    ]) {
      expect((await get(path, {})).status).toBe(401);
    }
    expect((await api.post('/admin/v1/risk/preview', {})).status).toBe(401);
  });

  it('rollups: counts from several flushes and instances add up; a read covers empty hours too', async () => {
    const a = new UsageRollup(api.runtime.db, api.runtime.logger, 60_000);
    const b = new UsageRollup(api.runtime.db, api.runtime.logger, 60_000);
    for (let i = 0; i < 5; i++) a.record('ak_rollup', 'challenge.image');
    b.record('ak_rollup', 'challenge.image', 3);
    await Promise.all([a.flush(), b.flush()]);
    a.record('ak_rollup', 'challenge.image');
    await a.close();
    await b.close();
    const hours = await a.read(['ak_rollup'], 3);
    expect(hours).toHaveLength(3);
    expect(hours.map((h) => h.counts['challenge.image'] ?? 0)).toEqual([0, 0, 9]);
  });
});
