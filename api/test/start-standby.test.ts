import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseAvailable, freshPostgresDatabase, type Json, postJson, TEST_DATABASE } from './harness.ts';
import { firstUrl, type Started, startStartTs } from './start-process.ts';

/**
 * `npm start` runs both standby roles beside the API (api/src/start.ts): their URLs are printed and
 * published at GET /v1/standby, they answer service_online while the API is up, and they share the
 * API's store of used offline_ tokens (one process, in memory).
 */

const run = await databaseAvailable();

describe.runIf(run)('npm start: the standby roles', () => {
  let child: ChildProcess;
  let output: () => string;
  let banner: Started['banner'];
  let dataDir: string;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
    const env: Record<string, string> = {
      PORT: '0',
      DEMO_PORT: '0',
      DATA_DIR: dataDir,
      // The standby refreshes its snapshot every second, so an app changed here is seen quickly.
      STANDBY_SNAPSHOT_INTERVAL_MS: '1000',
    };
    if (TEST_DATABASE === 'postgres') {
      const fresh = await freshPostgresDatabase();
      env.DATABASE_URL = fresh.url;
      drop = fresh.drop;
    }
    ({ child, banner, output } = await startStartTs(env));
  }, 150_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await drop?.();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints both standby URLs, publishes them at GET /v1/standby, and both answer service_online', async () => {
    const api = firstUrl(banner.get('API'));
    const bypass = firstUrl(banner.get('Standby bypass'));
    const fallback = firstUrl(banner.get('Standby fallback'));
    expect(bypass, output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fallback, output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const published = (await (await fetch(`${api}/v1/standby`)).json()) as Json;
    expect(published.data).toEqual({ bypass: [bypass], fallback: [fallback] });

    const init = await postJson(`${bypass}/v1/challenge/init`, { app_key: 'ak_x', action: 'login' });
    const validate = await postJson(
      `${fallback}/api/validate`,
      { pass_token: 'offline_x.y' },
      { 'X-App-Key': 'ak_x', 'X-App-Secret': 'sk_x' },
    );
    for (const res of [init, validate]) {
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: -1, error: 'service_online' });
      expect(res.body.message).toMatch(/main API is online/);
    }
    for (const url of [bypass, fallback]) expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it('shares the API’s store: an offline_ token is accepted once across the API and the standby', async () => {
    const api = firstUrl(banner.get('API'));
    const bypass = firstUrl(banner.get('Standby bypass'));
    const fallback = firstUrl(banner.get('Standby fallback'));
    const admin = { Authorization: `Bearer ${readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()}` };
    // npm start generates the standby's own credential beside the admin token and hands it to its standby.
    const sync = {
      Authorization: `Bearer ${readFileSync(join(dataDir, 'standby-sync-token'), 'utf8').trim()}`,
    };
    expect(sync.Authorization).toMatch(/^Bearer st_/);
    expect((await fetch(`${api}/internal/v1/standby/snapshot`, { headers: admin })).status).toBe(401);
    expect((await fetch(`${api}/internal/v1/standby/snapshot`, { headers: sync })).status).toBe(200);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo-app.json'), 'utf8'));
    const auth = { 'X-App-Key': demo.app_key, 'X-App-Secret': demo.app_secret };
    // The demo app in test mode (a one-hash puzzle offline), seen by the standby's next snapshot.
    const patchedAt = Date.now();
    const patched = await fetch(`${api}/admin/v1/apps/${demo.app_key}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ test_mode: true }),
    });
    expect(patched.status).toBe(200);
    // Waits for a snapshot built after the change (refreshed every second), however slow the machine is.
    await vi.waitFor(
      async () => {
        const { snapshot } = (await (await fetch(`${bypass}/status`)).json()) as Json;
        expect(Date.parse(snapshot.generated_at)).toBeGreaterThan(patchedAt);
      },
      { timeout: 15_000, interval: 200 },
    );
    // As the operator would during an outage: make the standby serve while the API is up.
    expect((await postJson(`${bypass}/internal/v1/mode`, { mode: 'serve' }, sync)).status).toBe(200);
    try {
      const init = await postJson(`${bypass}/v1/challenge/init`, { app_key: demo.app_key, action: 'login' });
      expect(init.body.data).toMatchObject({ tier: 'invisible', offline: true });
      const submit = await postJson(`${bypass}/v1/challenge/submit`, {
        app_key: demo.app_key,
        challenge_id: init.body.data.challenge_id,
        challenge: init.body.data.challenge,
        pow: await solvePuzzle(init.body.data.pow as Puzzle),
      });
      const token = submit.body.data.pass_token as string;
      expect(token).toMatch(/^offline_/);
      expect((await postJson(`${api}/v1/validate`, { pass_token: token }, auth)).body.data).toMatchObject({
        valid: true,
        offline: true,
      });
      await postJson(`${fallback}/internal/v1/mode`, { mode: 'serve' }, sync);
      expect((await postJson(`${fallback}/api/validate`, { pass_token: token }, auth)).body.error).toBe(
        'token_already_used',
      );
    } finally {
      await postJson(`${bypass}/internal/v1/mode`, { mode: 'auto' }, sync);
    }
  });

  it('one SIGINT stops the API, the demo site and both standby roles', async () => {
    const bypass = firstUrl(banner.get('Standby bypass'));
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    await expect(fetch(`${bypass}/healthz`)).rejects.toThrow();
  });
});
