import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';
import { firstUrl, type Started, startStartTs as start } from './start-process.ts';

/**
 * `npm start` end to end: api/src/start.ts in a child process on free ports (PORT=0, DEMO_PORT=0) with a
 * temporary DATA_DIR. Every printed URL answers, the demo page loads the widget from the API, and its
 * backend applies the caller rule to tokens from the headless solver.
 */

const run = await databaseAvailable();

describe.runIf(run)('npm start (api/src/start.ts): API and demo site', () => {
  let started: Started;
  let dataDir: string;
  let drop: (() => Promise<void>) | undefined;
  let api: string;
  let demo: string;
  let appKey: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
    const env: Record<string, string> = { PORT: '0', DEMO_PORT: '0', DATA_DIR: dataDir };
    if (TEST_DATABASE === 'postgres') {
      const fresh = await freshPostgresDatabase();
      env.DATABASE_URL = fresh.url;
      drop = fresh.drop;
    }
    started = await start(env);
    api = firstUrl(started.banner.get('API'));
    demo = firstUrl(started.banner.get('Demo login')).replace(/\/login$/, '');
    appKey = JSON.parse(readFileSync(join(dataDir, 'demo-app.json'), 'utf8')).app_key;
  }, 150_000);

  afterAll(async () => {
    if (started && started.child.exitCode === null && started.child.signalCode === null) {
      started.child.kill('SIGKILL');
    }
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints every URL, and each one answers', async () => {
    for (const label of [
      'API',
      'Console',
      'API reference',
      'Widget',
      'OpenAPI',
      'Metrics',
      'Admin token',
      'Demo login',
      'Demo app',
    ]) {
      expect(started.banner.has(label), `banner line ${label} in:\n${started.output()}`).toBe(true);
    }
    expect(api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
    for (const label of ['Console', 'API reference', 'Widget', 'OpenAPI', 'Metrics', 'Demo login']) {
      const res = await fetch(firstUrl(started.banner.get(label)));
      expect(res.status, label).toBe(200);
    }
    const tokenFile = started.banner.get('Admin token')!;
    expect(tokenFile).toBe(join(dataDir, 'admin-token'));
    expect(started.banner.get('Demo app')).toContain(appKey);
    expect(statSync(join(dataDir, 'demo-app.json')).mode & 0o777).toBe(0o600);
  });

  it('the demo page loads the widget from the API (else from the standby hosts), which serves it and the files it loads', async () => {
    const page = await (await fetch(`${demo}/login`)).text();
    // The embed that survives an outage: the API first, then each standby host.
    expect(page).toMatch(
      new RegExp(`\\(\\["${api}/widget/gatehouse\\.js"(,"http://[^"]+/widget/gatehouse\\.js")*\\],0\\)`),
    );
    expect(page).toContain(`data-gatehouse-api-server="${api}"`);
    expect(page).toContain(`data-gatehouse-app-key="${appKey}"`);
    expect(page).toContain('data-gatehouse-action="login"');
    const loader = await fetch(`${api}/widget/gatehouse.js`);
    expect(loader.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    const source = await loader.text();
    for (const chunk of source.match(/gatehouse-(ui|pow)\.[\w-]+\.js/g) ?? []) {
      const res = await fetch(`${api}/widget/${chunk}`);
      expect(res.status, chunk).toBe(200);
      expect(res.headers.get('cache-control')).toContain('immutable');
    }
    expect((await fetch(`${api}/widget/other.js`)).status).toBe(404);
  });

  describe('POST /login applies the caller rule (valid AND action = login)', () => {
    beforeAll(async () => {
      // The demo app keeps its real risk policy; for a headless client, put it in test mode.
      const adminToken = readFileSync(started.banner.get('Admin token')!, 'utf8').trim();
      const res = await fetch(`${api}/admin/v1/apps/${appKey}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ test_mode: true }),
      });
      expect(res.status).toBe(200);
    });

    const login = async (token: string, password = 'gatehouse') => {
      const res = await fetch(`${demo}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'demo', password, 'gatehouse-token': token }),
      });
      const html = await res.text();
      return { status: res.status, outcome: /data-outcome="([^"]+)"/.exec(html)?.[1], html };
    };

    it('a solved login token signs in; its replay is rejected', async () => {
      const { passToken } = await solveChallenge({ baseUrl: api, appKey, action: 'login' });
      const first = await login(passToken);
      expect(first).toMatchObject({ status: 200, outcome: 'signed-in' });
      expect(first.html).toContain('Signed in as demo');
      const replay = await login(passToken);
      expect(replay).toMatchObject({ status: 403, outcome: 'rejected' });
      expect(replay.html).toContain('already used');
    });

    it('a token solved for another action is rejected', async () => {
      const { passToken } = await solveChallenge({ baseUrl: api, appKey, action: 'register' });
      const res = await login(passToken);
      expect(res).toMatchObject({ status: 403, outcome: 'rejected' });
      // The SDK sends the expected action and the API refuses the token (token_action_mismatch).
      expect(res.html).toContain('this verification token was solved for another action');
    });

    it('a valid token with a wrong password, and a form without a token, do not sign in', async () => {
      const { passToken } = await solveChallenge({ baseUrl: api, appKey, action: 'login' });
      expect(await login(passToken, 'wrong')).toMatchObject({ status: 401, outcome: 'wrong-password' });
      expect(await login('')).toMatchObject({ status: 400, outcome: 'rejected' });
    });
  });

  it('quota exhausted: the dg_ token is shown as verification skipped, and refused by the demo policy', async () => {
    const adminToken = readFileSync(started.banner.get('Admin token')!, 'utf8').trim();
    const patch = (body: object) =>
      fetch(`${api}/admin/v1/apps/${appKey}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await patch({ monthly_quota: 0, overage_allowed: false })).status).toBe(200);
    try {
      const solved = await solveChallenge({ baseUrl: api, appKey, action: 'login' });
      expect(solved.tier).toBe('degraded');
      const res = await fetch(`${demo}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          username: 'demo',
          password: 'gatehouse',
          'gatehouse-token': solved.passToken,
        }),
      });
      const html = await res.text();
      expect(res.status).toBe(403);
      expect(html).toContain('data-outcome="degraded"');
      expect(html).toContain('Verification skipped (quota exhausted)');
    } finally {
      await patch({ monthly_quota: null, overage_allowed: null });
    }
  });

  it('one SIGINT stops both servers gracefully', async () => {
    const exited = once(started.child, 'exit');
    started.child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    await expect(fetch(`${api}/healthz`)).rejects.toThrow();
    await expect(fetch(`${demo}/login`)).rejects.toThrow();
  });
});
