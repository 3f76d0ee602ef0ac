import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../test/harness.ts';
import { ensureDemoApp } from './demo-app.ts';

describe('ensureDemoApp', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('creates the demo app once, keeps its key and secret in demo-app.json (0600), reuses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-app-'));
    const first = await ensureDemoApp(api.runtime.apps, dir);
    expect(first.created).toBe(true);
    const file = join(dir, 'demo-app.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      app_key: first.appKey,
      app_secret: first.appSecret,
    });
    expect((await api.runtime.apps.findByKey(first.appKey))?.name).toBe('demo');
    const again = await ensureDemoApp(api.runtime.apps, dir);
    expect(again).toEqual({ ...first, created: false });
  });

  it('replaces a file whose app is gone or whose secret no longer matches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-app-'));
    const file = join(dir, 'demo-app.json');
    writeFileSync(file, JSON.stringify({ app_key: 'ak_gone', app_secret: 'sk_x' }), { mode: 0o644 });
    const fresh = await ensureDemoApp(api.runtime.apps, dir);
    expect(fresh.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await api.runtime.apps.rotateSecret(fresh.appKey, 0);
    const rotated = await ensureDemoApp(api.runtime.apps, dir);
    expect(rotated.created).toBe(true);
    expect(rotated.appKey).not.toBe(fresh.appKey);
  });
});
