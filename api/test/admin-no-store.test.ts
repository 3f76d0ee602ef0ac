import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

/*
 * Answers that carry a new secret (an app's secret at creation and rotation, a rotated app key, a region's
 * sync credential) lacked `Cache-Control: no-store`: a browser or a proxy cache in between could keep them.
 * Every admin answer now says no-store, errors included; public answers keep their own caching.
 */
const run = await databaseAvailable();

describe.runIf(run)('admin answers are never stored', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  const admin = () => ({ authorization: `Bearer ${api.runtime.adminToken}` });

  it('says no-store on every answer that carries a secret, and on admin errors', async () => {
    const created = await api.post('/admin/v1/apps', { name: 'no-store' }, admin());
    expect(created.status).toBe(201);
    expect(created.body.data.app_secret).toBeTruthy();
    const appKey = created.body.data.app_key as string;
    const answers = [
      created,
      await api.post(`/admin/v1/apps/${appKey}/rotate-secret`, {}, admin()),
      await api.post(`/admin/v1/apps/${appKey}/rotate-key`, {}, admin()),
      await api.post('/admin/v1/standby-keys/sync-credential', { region: 'default' }, admin()),
      await api.post(
        '/admin/v1/apps',
        { name: 'x' },
        { authorization: 'Bearer wrong-wrong-wrong-wrong-wrong' },
      ),
    ];
    expect(answers.map((a) => a.status)).toEqual([201, 200, 200, 200, 401]);
    for (const answer of answers) expect(answer.headers.get('cache-control')).toBe('no-store');
    const list = await fetch(`${api.url}/admin/v1/apps`, { headers: admin() });
    expect(list.headers.get('cache-control')).toBe('no-store');
    // A public answer keeps its own caching.
    const hosts = await fetch(`${api.url}/v1/standby`);
    expect(hosts.headers.get('cache-control')).toBe('public, max-age=300');
  });
});
