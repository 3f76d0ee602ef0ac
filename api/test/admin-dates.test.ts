import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * One admin input must not break the app list for good: a `subscription_expires_at` with a year the
 * database or the date parser mishandles (0020-02-29, year 0000) would store a row, answer 500, and make
 * every later GET /admin/v1/apps answer 500 too. Dates are refused outside 1970-01-01T00:00:00Z to
 * 9999-12-31T23:59:59.999Z (docs/decisions.md, "The request boundary"), and a bad row already stored does
 * not break the list.
 */

const run = await databaseAvailable();

describe.runIf(run)('admin API: subscription dates', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function admin(method: string, path: string, body?: unknown) {
    const res = await fetch(api.url + path, {
      method,
      headers: {
        authorization: `Bearer ${api.runtime.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  }

  const listKeys = async () => {
    const list = await admin('GET', '/admin/v1/apps');
    expect(list.status).toBe(200);
    expectMatchesOpenApi('/admin/v1/apps', 'get', list);
    return (list.body.data.apps as { app_key: string }[]).map((a) => a.app_key);
  };

  const OUT_OF_RANGE = [
    '0020-02-29T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '0999-12-31T23:59:59Z',
    '1969-12-31T23:59:59Z',
    '1970-01-01T00:30:00+01:00',
    '9999-12-31T23:59:59-01:00',
  ];

  it('refuses dates outside 1970..9999 on creation with a 400 envelope and stores nothing', async () => {
    const before = await listKeys();
    for (const date of OUT_OF_RANGE) {
      const res = await admin('POST', '/admin/v1/apps', { name: 'dated', subscription_expires_at: date });
      expect(res.status, date).toBe(400);
      expect(res.body).toMatchObject({ code: -1, error: 'invalid_request' });
      expect(res.body.message).toContain('subscription_expires_at');
      expectMatchesOpenApi('/admin/v1/apps', 'post', res);
    }
    expect(await listKeys()).toEqual(before);
  });

  it('refuses them on update too and keeps the stored date', async () => {
    const created = await admin('POST', '/admin/v1/apps', {
      name: 'patched',
      plan: 'pro',
      subscription_expires_at: '2099-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    const key = created.body.data.app_key as string;
    for (const date of OUT_OF_RANGE) {
      const res = await admin('PATCH', `/admin/v1/apps/${key}`, { subscription_expires_at: date });
      expect(res.status, date).toBe(400);
      expect(res.body.message).toContain('subscription_expires_at');
      expectMatchesOpenApi(`/admin/v1/apps/${key}`, 'patch', res);
    }
    const shown = await admin('GET', `/admin/v1/apps/${key}`);
    expect(shown.body.data.subscription_expires_at).toBe('2099-01-01T00:00:00.000Z');
    await listKeys();
  });

  it('accepts both ends of the range and reads them back unchanged', async () => {
    for (const [date, stored] of [
      ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
      ['9999-12-31T23:59:59+00:00', '9999-12-31T23:59:59.000Z'],
      ['1970-01-01T00:00:00-05:00', '1970-01-01T05:00:00.000Z'],
    ] as const) {
      const res = await admin('POST', '/admin/v1/apps', { name: 'edge', subscription_expires_at: date });
      expect(res.status, date).toBe(201);
      expect(res.body.data.subscription_expires_at).toBe(stored);
      const list = await admin('GET', '/admin/v1/apps');
      expect(list.status).toBe(200);
      const listed = list.body.data.apps.find((a: Json) => a.app_key === res.body.data.app_key);
      expect(listed.subscription_expires_at).toBe(stored);
    }
  });

  it('keeps listing apps when a stored date cannot be read back, and treats that subscription as lapsed', async () => {
    const created = await admin('POST', '/admin/v1/apps', {
      name: 'corrupt',
      plan: 'enterprise',
      subscription_expires_at: '2099-01-01T00:00:00Z',
    });
    const key = created.body.data.app_key as string;
    // What the old code stored: a date the driver turns back into an Invalid Date.
    await api.runtime.db.execute(
      sql`update apps set subscription_expires_at = '0020-02-29T00:00:00Z' where app_key = ${key}`,
    );
    const list = await admin('GET', '/admin/v1/apps');
    expect(list.status).toBe(200);
    expectMatchesOpenApi('/admin/v1/apps', 'get', list);
    const listed = list.body.data.apps.find((a: Json) => a.app_key === key);
    // An expiry that cannot be read fails closed: the free plan, never a paid plan without end.
    expect(listed).toMatchObject({ plan: 'enterprise', effective_plan: 'free' });
    const shown = await admin('GET', `/admin/v1/apps/${key}`);
    expect(shown.status).toBe(200);
    expectMatchesOpenApi(`/admin/v1/apps/${key}`, 'get', shown);
    // The operator repairs it through the API.
    const fixed = await admin('PATCH', `/admin/v1/apps/${key}`, {
      subscription_expires_at: '2099-01-01T00:00:00Z',
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.data).toMatchObject({
      effective_plan: 'enterprise',
      subscription_expires_at: '2099-01-01T00:00:00.000Z',
    });
  });
});
