import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../src/apps/plans.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
  body: any;
  text: string;
}

describe.runIf(run)('admin API /admin/v1', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  /** One admin request; `token: null` sends no Authorization header. */
  async function admin(
    method: string,
    path: string,
    options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const token = options.token === undefined ? api.runtime.adminToken : options.token;
    const headers: Record<string, string> = { ...options.headers };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(api.url + path, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), text };
  }

  async function createApp(settings: Record<string, unknown> = {}) {
    const res = await admin('POST', '/admin/v1/apps', { body: { name: 'shop', ...settings } });
    expect(res.status).toBe(201);
    return res.body.data as Record<string, unknown> & { app_key: string; app_secret: string };
  }

  /**
   * Authenticates as the app on /v1/validate with a garbage pass token: `token_not_found` (a 200 verdict) means the
   * credentials passed, `invalid_app_secret` (401) or `app_disabled` (403) that they did not.
   */
  async function authAs(appKey: string, secret: string) {
    const res = await api.post(
      '/v1/validate',
      { pass_token: 'pt_garbage' },
      { 'X-App-Key': appKey, 'X-App-Secret': secret },
    );
    return { status: res.status, error: res.body.error as string };
  }
  const PASSED = { status: 200, error: 'token_not_found' };

  function expectInvalid(res: Answer, field: string) {
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: -1, error: 'invalid_request' });
    expect(res.body.message).toContain(field);
  }

  describe('authentication', () => {
    const routes: [string, string][] = [
      ['GET', '/admin/v1/apps'],
      ['POST', '/admin/v1/apps'],
      ['GET', '/admin/v1/apps/ak_whatever'],
      ['PATCH', '/admin/v1/apps/ak_whatever'],
      ['POST', '/admin/v1/apps/ak_whatever/rotate-secret'],
      ['POST', '/admin/v1/apps/ak_whatever/disable'],
      ['POST', '/admin/v1/apps/ak_whatever/enable'],
    ];

    it('answers 401 unauthorized on every route without a token, a wrong one or another scheme', async () => {
      const real = api.runtime.adminToken;
      const wrong = [
        null,
        '',
        `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`,
        real.slice(0, -1),
        `${real}x`,
        real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
      ];
      for (const [method, path] of routes) {
        for (const token of wrong) {
          const res = await admin(method, path, { token, body: method === 'GET' ? undefined : {} });
          expect(res.status, `${method} ${path} with ${token === null ? 'no token' : 'a wrong token'}`).toBe(
            401,
          );
          expect(res.body).toMatchObject({ code: -1, error: 'unauthorized' });
        }
        const basic = await admin(method, path, {
          token: null,
          headers: { authorization: `Basic ${Buffer.from(`admin:${real}`).toString('base64')}` },
        });
        expect(basic.status).toBe(401);
        const bare = await admin(method, path, { token: null, headers: { authorization: real } });
        expect(bare.status).toBe(401);
      }
    });

    it('creates nothing for an unauthenticated request', async () => {
      const before = (await admin('GET', '/admin/v1/apps')).body.data.apps.length;
      const res = await admin('POST', '/admin/v1/apps', { token: 'nope', body: { name: 'intruder' } });
      expect(res.status).toBe(401);
      const after = await admin('GET', '/admin/v1/apps');
      expect(after.body.data.apps.length).toBe(before);
      expect(after.text).not.toContain('intruder');
    });

    it('accepts the right bearer token, generated into DATA_DIR/admin-token with mode 0600', async () => {
      expect((await admin('GET', '/admin/v1/apps')).status).toBe(200);
      const file = join(api.config.dataDir, 'admin-token');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(api.runtime.adminToken.length).toBeGreaterThanOrEqual(32);
    });

    it('uses GATEHOUSE_ADMIN_TOKEN when it is set', async () => {
      const token = 'a-configured-admin-token-of-some-length';
      const other = await startTestApi({ GATEHOUSE_ADMIN_TOKEN: token });
      try {
        const ok = await fetch(`${other.url}/admin/v1/apps`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(ok.status).toBe(200);
        const generated = await fetch(`${other.url}/admin/v1/apps`, {
          headers: { authorization: `Bearer ${api.runtime.adminToken}` },
        });
        expect(generated.status).toBe(401);
      } finally {
        await other.close();
      }
    });
  });

  describe('create, list and show', () => {
    it('returns the secret once, on creation; list and show never do', async () => {
      const created = await createApp({ name: 'once' });
      expect(created.app_key).toMatch(/^ak_/);
      expect(created.app_secret).toMatch(/^sk_/);
      expect(await authAs(created.app_key, created.app_secret)).toEqual(PASSED);

      const list = await admin('GET', '/admin/v1/apps');
      expect(list.status).toBe(200);
      const listed = list.body.data.apps.find((a: { app_key: string }) => a.app_key === created.app_key);
      expect(listed).toMatchObject({ name: 'once', disabled: false });
      const shown = await admin('GET', `/admin/v1/apps/${created.app_key}`);
      expect(shown.status).toBe(200);
      expect(shown.body.data).toMatchObject({ app_key: created.app_key, name: 'once' });
      for (const text of [list.text, shown.text]) {
        expect(text).not.toContain(created.app_secret);
        expect(text).not.toContain(created.app_secret.slice(3));
        expect(text).not.toMatch(/app_secret|secret_hash|"sk_/);
      }
    });

    it('applies the defaults and the settings given', async () => {
      const app = await createApp({
        name: 'custom',
        plan: 'pro',
        monthly_quota: 12_345,
        overage_allowed: false,
        server_token_required: true,
        test_mode: true,
        pass_token_ttl: 120,
        client_ip_policy: 'reject',
        allowed_domains: ['shop.example'],
      });
      expect(app).toMatchObject({
        plan: 'pro',
        effective_plan: 'pro',
        monthly_quota: 12_345,
        overage_allowed: false,
        server_token_required: true,
        test_mode: true,
        pass_token_ttl: 120,
        client_ip_policy: 'reject',
        allowed_domains: ['shop.example'],
      });
      const plain = await createApp({ name: 'plain' });
      expect(plain).toMatchObject({
        plan: 'free',
        monthly_quota: PLANS.free.monthlyQuota,
        overage_allowed: false,
        subscription_expires_at: null,
        server_token_required: false,
        test_mode: false,
        pass_token_ttl: 300,
        client_ip_policy: 'report',
        disabled: false,
        secret_rotation_grace_until: null,
      });
    });

    it('rejects bad settings and unknown fields on creation with 400 envelopes', async () => {
      const post = (body: unknown) => admin('POST', '/admin/v1/apps', { body });
      expectInvalid(await post({}), 'name');
      expectInvalid(await post({ name: '   ' }), 'name');
      expectInvalid(await post({ name: 'x', plan: 'platinum' }), 'plan');
      expectInvalid(await post({ name: 'x', colour: 'red' }), 'colour');
      expectInvalid(await post({ name: 'x', app_secret: 'sk_mine' }), 'app_secret');
      expectInvalid(await post({ name: 'x', pass_token_ttl: 5 }), 'pass_token_ttl');
      expectInvalid(await post({ name: 'x', monthly_quota: -1 }), 'monthly_quota');
      expectInvalid(
        await post({ name: 'x', subscription_expires_at: 'next year' }),
        'subscription_expires_at',
      );
      const form = await admin('POST', '/admin/v1/apps', {
        body: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(415);
    });

    it('answers 404 not_found for an unknown app key and 400 for one that is not an app key', async () => {
      const missing = await admin('GET', '/admin/v1/apps/ak_doesnotexist');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: -1, error: 'not_found' });
      expect(missing.body.message).toContain('ak_doesnotexist');
      expectInvalid(await admin('GET', '/admin/v1/apps/not-a-key'), 'appKey');
    });
  });

  describe('update', () => {
    it('changes only the fields given, keeping overrides and dates it was not asked about', async () => {
      const app = await createApp({
        plan: 'pro',
        monthly_quota: 5_000,
        overage_allowed: false,
        subscription_expires_at: '2099-01-01T00:00:00Z',
        allowed_domains: ['shop.example'],
      });
      const res = await admin('PATCH', `/admin/v1/apps/${app.app_key}`, { body: { name: 'renamed' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        name: 'renamed',
        plan: 'pro',
        monthly_quota: 5_000,
        overage_allowed: false,
        subscription_expires_at: '2099-01-01T00:00:00.000Z',
        allowed_domains: ['shop.example'],
      });
      expect(res.text).not.toContain('app_secret');

      const more = await admin('PATCH', `/admin/v1/apps/${app.app_key}`, {
        body: { monthly_quota: null, test_mode: true, pass_token_ttl: 600, client_ip_policy: 'reject' },
      });
      expect(more.body.data).toMatchObject({
        name: 'renamed',
        monthly_quota: PLANS.pro.monthlyQuota,
        test_mode: true,
        pass_token_ttl: 600,
        client_ip_policy: 'reject',
      });
      const shown = await admin('GET', `/admin/v1/apps/${app.app_key}`);
      expect(shown.body.data).toEqual(more.body.data);
    });

    it('validates every field and refuses unknown ones with 400 invalid_request', async () => {
      const app = await createApp();
      const patch = (body: unknown) => admin('PATCH', `/admin/v1/apps/${app.app_key}`, { body });
      expectInvalid(await patch({ plan: 'gold' }), 'plan');
      expectInvalid(await patch({ pass_token_ttl: 3601 }), 'pass_token_ttl');
      expectInvalid(await patch({ pass_token_ttl: '300' }), 'pass_token_ttl');
      expectInvalid(await patch({ monthly_quota: 1.5 }), 'monthly_quota');
      expectInvalid(await patch({ client_ip_policy: 'ignore' }), 'client_ip_policy');
      expectInvalid(await patch({ test_mode: 'yes' }), 'test_mode');
      expectInvalid(await patch({ name: '' }), 'name');
      expectInvalid(await patch({ name: null }), 'name');
      expectInvalid(await patch({ disabled: true }), 'disabled');
      expectInvalid(await patch({ secret_hash: 'x' }), 'secret_hash');
      const invalidJson = await fetch(`${api.url}/admin/v1/apps/${app.app_key}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${api.runtime.adminToken}`, 'content-type': 'application/json' },
        body: '{"name":',
      });
      expect(invalidJson.status).toBe(400);
      expect(await invalidJson.json()).toMatchObject({ code: -1, error: 'invalid_request' });
      const unchanged = await admin('GET', `/admin/v1/apps/${app.app_key}`);
      expect(unchanged.body.data).toMatchObject({ name: 'shop', plan: 'free', pass_token_ttl: 300 });
      const missing = await admin('PATCH', '/admin/v1/apps/ak_doesnotexist', { body: { name: 'x' } });
      expect(missing.status).toBe(404);
    });
  });

  describe('rotate-secret', () => {
    it('keeps both secrets valid during the grace period, then ends it with grace 0', async () => {
      const app = await createApp();
      const first = app.app_secret;
      const rotated = await admin('POST', `/admin/v1/apps/${app.app_key}/rotate-secret`, {
        body: { grace_seconds: 3600 },
      });
      expect(rotated.status).toBe(200);
      const second = rotated.body.data.app_secret as string;
      expect(second).toMatch(/^sk_/);
      expect(second).not.toBe(first);
      const graceUntil = Date.parse(rotated.body.data.secret_rotation_grace_until);
      expect(Math.abs(graceUntil - (Date.now() + 3600_000))).toBeLessThan(60_000);
      expect(await authAs(app.app_key, first)).toEqual(PASSED);
      expect(await authAs(app.app_key, second)).toEqual(PASSED);

      const again = await admin('POST', `/admin/v1/apps/${app.app_key}/rotate-secret`, {
        body: { grace_seconds: 0 },
      });
      expect(again.status).toBe(200);
      const third = again.body.data.app_secret as string;
      expect(again.body.data.secret_rotation_grace_until).toBeNull();
      expect(await authAs(app.app_key, third)).toEqual(PASSED);
      expect(await authAs(app.app_key, second)).toEqual({ status: 401, error: 'invalid_app_secret' });
      expect(await authAs(app.app_key, first)).toEqual({ status: 401, error: 'invalid_app_secret' });
      const shown = await admin('GET', `/admin/v1/apps/${app.app_key}`);
      expect(shown.text).not.toContain(third);
    });

    it('defaults to one day of grace without a body', async () => {
      const app = await createApp();
      const res = await admin('POST', `/admin/v1/apps/${app.app_key}/rotate-secret`);
      expect(res.status).toBe(200);
      const graceUntil = Date.parse(res.body.data.secret_rotation_grace_until);
      expect(Math.abs(graceUntil - (Date.now() + 86_400_000))).toBeLessThan(60_000);
      expect(await authAs(app.app_key, app.app_secret)).toEqual(PASSED);
    });

    it('honours grace_seconds sent in a chunked body (no Content-Length)', async () => {
      const app = await createApp();
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"grace_seconds":0}'));
          controller.close();
        },
      });
      const res = await fetch(`${api.url}/admin/v1/apps/${app.app_key}/rotate-secret`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api.runtime.adminToken}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(200);
      expect((await res.json()).data.secret_rotation_grace_until).toBeNull();
      expect(await authAs(app.app_key, app.app_secret)).toEqual({ status: 401, error: 'invalid_app_secret' });
    });

    it('rejects a bad grace with 400 and leaves the secret unchanged', async () => {
      const app = await createApp();
      const rotate = (body: unknown) =>
        admin('POST', `/admin/v1/apps/${app.app_key}/rotate-secret`, { body });
      expectInvalid(await rotate({ grace_seconds: -1 }), 'grace_seconds');
      expectInvalid(await rotate({ grace_seconds: 30 * 86_400 + 1 }), 'grace_seconds');
      expectInvalid(await rotate({ grace_seconds: 'soon' }), 'grace_seconds');
      expectInvalid(await rotate({ grace: 10 }), 'grace');
      expect(await authAs(app.app_key, app.app_secret)).toEqual(PASSED);
      const missing = await admin('POST', '/admin/v1/apps/ak_doesnotexist/rotate-secret', { body: {} });
      expect(missing.status).toBe(404);
    });
  });

  describe('disable and enable', () => {
    it("makes the app's credentials answer 403 app_disabled at once, and enable restores them", async () => {
      const app = await createApp();
      const headers = { 'X-App-Key': app.app_key, 'X-App-Secret': app.app_secret };
      expect(await authAs(app.app_key, app.app_secret)).toEqual(PASSED);

      const disabled = await admin('POST', `/admin/v1/apps/${app.app_key}/disable`);
      expect(disabled.status).toBe(200);
      expect(disabled.body.data.disabled).toBe(true);
      expect(await authAs(app.app_key, app.app_secret)).toEqual({ status: 403, error: 'app_disabled' });
      const issue = await api.post('/v1/server/challenge/issue', { action: 'login' }, headers);
      expect(issue.status).toBe(403);
      expect(issue.body).toMatchObject({ code: -1, error: 'app_disabled' });
      expect((await admin('GET', `/admin/v1/apps/${app.app_key}`)).body.data.disabled).toBe(true);

      const enabled = await admin('POST', `/admin/v1/apps/${app.app_key}/enable`);
      expect(enabled.status).toBe(200);
      expect(enabled.body.data.disabled).toBe(false);
      expect(await authAs(app.app_key, app.app_secret)).toEqual(PASSED);
      const issued = await api.post('/v1/server/challenge/issue', { action: 'login' }, headers);
      expect(issued.status).toBe(200);
    });

    it('still rejects a wrong secret as invalid_app_secret on a disabled app', async () => {
      const app = await createApp();
      await admin('POST', `/admin/v1/apps/${app.app_key}/disable`);
      expect(await authAs(app.app_key, 'sk_wrong')).toEqual({ status: 401, error: 'invalid_app_secret' });
      const missing = await admin('POST', '/admin/v1/apps/ak_doesnotexist/disable');
      expect(missing.status).toBe(404);
    });
  });

  describe('subscriptions', () => {
    it('shows an expired paid subscription as effective plan free with the free quota', async () => {
      const app = await createApp({
        plan: 'pro',
        monthly_quota: 2_000_000,
        overage_allowed: true,
        subscription_expires_at: '2020-01-01T00:00:00Z',
      });
      expect(app).toMatchObject({
        plan: 'pro',
        effective_plan: 'free',
        monthly_quota: PLANS.free.monthlyQuota,
        overage_allowed: PLANS.free.overageAllowed,
        subscription_expires_at: '2020-01-01T00:00:00.000Z',
      });
      // An expired subscription never disables the app: it keeps working on the free plan.
      expect(await authAs(app.app_key, app.app_secret)).toEqual(PASSED);

      const renewed = await admin('PATCH', `/admin/v1/apps/${app.app_key}`, {
        body: { subscription_expires_at: '2099-01-01T00:00:00+02:00' },
      });
      expect(renewed.body.data).toMatchObject({
        effective_plan: 'pro',
        monthly_quota: 2_000_000,
        subscription_expires_at: '2098-12-31T22:00:00.000Z',
      });
      const open = await admin('PATCH', `/admin/v1/apps/${app.app_key}`, {
        body: { subscription_expires_at: null },
      });
      expect(open.body.data).toMatchObject({ effective_plan: 'pro', subscription_expires_at: null });
    });
  });
});
