import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * One admin input must not break an app for good: stored as any object, a `risk_policy` whose reputation
 * list entry is not an IP range would make every challenge of that app answer 500, and a misspelt tier or
 * inverted thresholds would be silently replaced by the defaults. The admin API checks the policy with the
 * schema the risk engine reads it with, and stores it as given.
 */

const run = await databaseAvailable();

describe.runIf(run)('admin API: risk_policy', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  const headers = () => ({ authorization: `Bearer ${api.runtime.adminToken}` });
  const init = (appKey: string) => api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });

  it('refuses a policy the risk engine cannot use with 400 naming the field, on create and update', async () => {
    const target = await api.post('/admin/v1/apps', { name: 'policy' }, headers());
    const key = target.body.data.app_key as string;
    for (const [policy, field] of [
      [{ reputation: { deny: ['not-a-network'] } }, 'risk_policy.reputation.deny.0'],
      [{ reputation: { allow: ['10.0.0.0/33'] } }, 'risk_policy.reputation.allow.0'],
      [{ high: 'rejct' }, 'risk_policy.high'],
      [{ invisible_below: 90, image_below: 10 }, 'risk_policy.invisible_below'],
      [{ image_kinds: [] }, 'risk_policy.image_kinds'],
      [{ rate_limit: { ip_per_minute: -1 } }, 'risk_policy.rate_limit.ip_per_minute'],
      // Misspelt keys: stored and silently ignored, the policy meant was never applied.
      [{ invisble_below: 10 }, 'invisble_below'],
      [{ rate_limit: { ip_per_minut: 5 } }, 'ip_per_minut'],
      [{ velocity: { ipp: [1, 2] } }, 'ipp'],
    ] as const) {
      const created = await api.post('/admin/v1/apps', { name: 'policy', risk_policy: policy }, headers());
      expect(created.status, JSON.stringify(policy)).toBe(400);
      expect(created.body.error).toBe('invalid_request');
      expect(created.body.message).toContain(field);
      expectMatchesOpenApi('/admin/v1/apps', 'post', created);
      const res = await fetch(`${api.url}/admin/v1/apps/${key}`, {
        method: 'PATCH',
        headers: { ...headers(), 'content-type': 'application/json' },
        body: JSON.stringify({ risk_policy: policy }),
      });
      expect(res.status, JSON.stringify(policy)).toBe(400);
    }
    expect((await init(key)).status).toBe(200);
  });

  it('stores a good policy as given (defaults stay defaults) and applies it', async () => {
    const policy = {
      high: 'reject',
      invisible_below: 0,
      image_below: 0,
      reputation: { allow: ['10.0.0.0/8'] },
    };
    const created = await api.post('/admin/v1/apps', { name: 'strict', risk_policy: policy }, headers());
    expect(created.status).toBe(201);
    expect(created.body.data.risk_policy).toEqual(policy);
    const refused = await init(created.body.data.app_key);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('request_rejected');
  });

  it('never answers 500 for a bad policy already stored: the engine falls back to the defaults', async () => {
    const created = await api.post('/admin/v1/apps', { name: 'stored' }, headers());
    const key = created.body.data.app_key as string;
    await api.runtime.db.execute(
      sql`update apps set risk_policy = ${JSON.stringify({ reputation: { deny: ['nope'] } })}::jsonb where app_key = ${key}`,
    );
    await api.runtime.apps.require(key); // reads the row again, past the look-up cache
    const res = await init(key);
    expect(res.status).toBe(200);
    const list = await fetch(`${api.url}/admin/v1/apps`, { headers: headers() });
    expect(list.status).toBe(200);
    const listed = ((await list.json()) as Json).data.apps.find((a: Json) => a.app_key === key);
    expect(listed.risk_policy).toEqual({ reputation: { deny: ['nope'] } });
  });
});
