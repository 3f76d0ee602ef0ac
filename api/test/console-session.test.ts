import type { AddressInfo } from 'node:net';
import { consoleSessions } from '@gatehouse/core/db/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { ConsoleSessions } from '../src/console/sessions.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * The console's sign-in session over real HTTP. The session is never the admin token itself (which would stay
 * accepted after sign-out and never expire): the token is exchanged once for a session cookie (HttpOnly,
 * SameSite=Strict, Secure over HTTPS) that ends at sign-out, when idle, at an absolute limit and when the admin
 * token changes; a state-changing request by cookie needs the CSRF token. The API's session clock is injected,
 * so expiry is tested without waiting.
 */
const run = await databaseAvailable();

const MINUTE = 60_000;

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

describe.runIf(run)('console sign-in sessions', () => {
  let api: TestApi;
  let now = Date.parse('2026-03-01T08:00:00Z');

  beforeAll(async () => {
    api = await startTestApi({}, undefined, { consoleClock: () => now });
  });
  afterAll(() => api?.close());

  async function call(
    method: string,
    path: string,
    options: { cookie?: string; csrf?: string; body?: unknown; headers?: Record<string, string> } = {},
    base = api.url,
  ): Promise<Answer> {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(options.cookie ? { cookie: options.cookie } : {}),
        ...(options.csrf ? { 'x-csrf-token': options.csrf } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, headers: res.headers };
  }

  /** Signs in; returns the cookie as a browser would send it back, its attributes and the CSRF token. */
  async function signIn(headers: Record<string, string> = {}) {
    const res = await call('POST', '/admin/v1/session', {
      body: { admin_token: api.runtime.adminToken },
      headers,
    });
    expect(res.status).toBe(201);
    expectMatchesOpenApi('/admin/v1/session', 'post', res);
    const setCookie = res.headers.getSetCookie();
    expect(setCookie).toHaveLength(1);
    const [pair, ...attributes] = setCookie[0]!.split(/;\s*/);
    return {
      cookie: pair!,
      attributes: attributes.map((a) => a.toLowerCase()),
      csrf: res.body.data.csrf_token as string,
      body: res.body,
    };
  }

  it('exchanges the admin token for an HttpOnly, SameSite=Strict cookie that is not the token', async () => {
    const { cookie, attributes, csrf, body } = await signIn();
    expect(cookie).toMatch(/^gatehouse_console=cs_[A-Za-z0-9_-]{43}$/);
    expect(cookie).not.toContain(api.runtime.adminToken);
    expect(attributes).toEqual(expect.arrayContaining(['path=/', 'samesite=strict', 'httponly']));
    // Plain HTTP: a Secure cookie would never come back.
    expect(attributes).not.toContain('secure');
    expect(JSON.stringify(body)).not.toContain(api.runtime.adminToken);
    expect(csrf.length).toBeGreaterThanOrEqual(40);
    expect(body.data.expires_at).toBe(new Date(now + 12 * 60 * MINUTE).toISOString());
    expect(body.data.idle_expires_at).toBe(new Date(now + 30 * MINUTE).toISOString());
    const listed = await call('GET', '/admin/v1/apps', { cookie });
    expect(listed.status).toBe(200);
    const current = await call('GET', '/admin/v1/session', { cookie });
    expect(current.status).toBe(200);
    expect(current.headers.get('cache-control')).toBe('no-store');
    expectMatchesOpenApi('/admin/v1/session', 'get', current);
    expect(current.body.data.csrf_token).toBe(csrf);
  });

  it('is Secure and __Host- prefixed when the page is on HTTPS (TLS ended at a proxy)', async () => {
    const { cookie, attributes } = await signIn({ Origin: 'https://gatehouse.example' });
    expect(cookie).toMatch(/^__Host-gatehouse_console=cs_/);
    expect(attributes).toEqual(expect.arrayContaining(['secure', 'path=/', 'samesite=strict', 'httponly']));
    expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(200);
  });

  it('refuses a wrong admin token at sign-in, and sets no cookie', async () => {
    const wrong = await call('POST', '/admin/v1/session', { body: { admin_token: 'at_wrong' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ code: -1, error: 'unauthorized' });
    expect(wrong.headers.getSetCookie()).toEqual([]);
    expectMatchesOpenApi('/admin/v1/session', 'post', wrong);
    const extra = await call('POST', '/admin/v1/session', {
      body: { admin_token: api.runtime.adminToken, remember: true },
    });
    expect(extra.status).toBe(400);
  });

  it('needs the CSRF token for every request by cookie that changes something', async () => {
    const { cookie, csrf } = await signIn();
    const forged = await call('POST', '/admin/v1/apps', { cookie, body: { name: 'csrf' } });
    expect(forged.status).toBe(401);
    expect(forged.body.message).toContain('X-CSRF-Token');
    const otherSession = await signIn();
    const crossed = await call('POST', '/admin/v1/apps', {
      cookie,
      csrf: otherSession.csrf,
      body: { name: 'csrf' },
    });
    expect(crossed.status).toBe(401);
    const apps = await call('GET', '/admin/v1/apps', { cookie });
    expect(apps.body.data.apps.map((a: Json) => a.name)).not.toContain('csrf');
    const created = await call('POST', '/admin/v1/apps', { cookie, csrf, body: { name: 'by-cookie' } });
    expect(created.status).toBe(201);
  });

  it('ends at sign-out: the old cookie is refused everywhere after', async () => {
    const { cookie, csrf } = await signIn();
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(200);
    const noCsrf = await call('DELETE', '/admin/v1/session', { cookie });
    expect(noCsrf.status).toBe(401);
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(200);
    const out = await call('DELETE', '/admin/v1/session', { cookie, csrf });
    expect(out.status).toBe(200);
    expectMatchesOpenApi('/admin/v1/session', 'delete', out);
    expect(out.headers.getSetCookie()[0]).toMatch(/^gatehouse_console=;.*expires=Thu, 01 Jan 1970/i);
    for (const [method, path] of [
      ['GET', '/admin/v1/apps'],
      ['GET', '/admin/v1/session'],
      ['POST', '/admin/v1/apps'],
      ['DELETE', '/admin/v1/session'],
    ] as const) {
      const res = await call(method, path, {
        cookie,
        csrf,
        ...(method === 'POST' ? { body: { name: 'after-sign-out' } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toMatchObject({ code: -1, error: 'unauthorized' });
    }
  });

  it('ends after 30 idle minutes; each request restarts the idle clock', async () => {
    const { cookie } = await signIn();
    now += 29 * MINUTE;
    const seen = await call('GET', '/admin/v1/session', { cookie });
    expect(seen.status).toBe(200);
    expect(seen.body.data.idle_expires_at).toBe(new Date(now + 30 * MINUTE).toISOString());
    now += 29 * MINUTE;
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(200);
    now += 30 * MINUTE;
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(401);
    // Over for good: activity cannot bring it back.
    now -= 1 * MINUTE;
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(401);
  });

  it('ends 12 hours after sign-in however active it is', async () => {
    const start = now;
    const { cookie } = await signIn();
    while (now + 20 * MINUTE < start + 12 * 60 * MINUTE) {
      now += 20 * MINUTE;
      expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(200);
    }
    now = start + 12 * 60 * MINUTE;
    expect((await call('GET', '/admin/v1/apps', { cookie })).status).toBe(401);
  });

  it('is revoked when the admin token changes (an API on the same database with a new token)', async () => {
    const { cookie } = await signIn();
    const newToken = 'at_the-new-admin-token-of-the-deployment';
    const renewed = createApp({
      ...api.runtime,
      adminToken: newToken,
      consoleSessions: new ConsoleSessions(api.runtime.db, newToken, undefined, () => now),
    });
    const server = renewed.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await call('GET', '/admin/v1/apps', { cookie }, base)).status).toBe(401);
      expect((await call('GET', '/admin/v1/session', { cookie }, base)).status).toBe(401);
      const bearer = await call(
        'GET',
        '/admin/v1/apps',
        {
          headers: { authorization: `Bearer ${newToken}` },
        },
        base,
      );
      expect(bearer.status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it('keeps no usable session id in the database', async () => {
    const { cookie } = await signIn();
    const id = cookie.split('=')[1]!;
    const rows = await api.runtime.db.select().from(consoleSessions);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(id);
    expect(JSON.stringify(rows)).not.toContain(api.runtime.adminToken);
  });

  it('still takes the bearer token (CLI, operator), which wins over a cookie', async () => {
    const ok = await call('GET', '/admin/v1/apps', {
      headers: { authorization: `Bearer ${api.runtime.adminToken}` },
    });
    expect(ok.status).toBe(200);
    const { cookie } = await signIn();
    const wrongBearer = await call('GET', '/admin/v1/apps', {
      cookie,
      headers: { authorization: 'Bearer at_wrong' },
    });
    expect(wrongBearer.status).toBe(401);
  });
});

describe.runIf(run)('console sign-in throttling', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi({
      AUTH_FAILURE_WINDOW_SECONDS: '60',
      AUTH_FAILURES_PER_SOURCE_AND_KEY: '5',
      AUTH_FAILURES_PER_SOURCE: '30',
      AUTH_FAILURES_PER_KEY: '100',
    });
  });
  afterAll(() => api?.close());

  it('refuses a source with 429 after repeated wrong tokens at sign-in, even the right token then', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await api.post('/admin/v1/session', { admin_token: `at_guess-${i}` });
      expect(res.status).toBe(401);
    }
    const throttled = await api.post('/admin/v1/session', { admin_token: api.runtime.adminToken });
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ code: -1, error: 'rate_limited' });
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(throttled.headers.getSetCookie()).toEqual([]);
  });
});
