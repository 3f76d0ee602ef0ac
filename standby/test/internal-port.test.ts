import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/*
 * The Ingress routes the bypass and fallback hosts to the standby pods, so on a public port the
 * operator's `POST /internal/v1/mode` would be reachable from outside (behind the sync token only). With
 * STANDBY_INTERNAL_PORT it is served on that port alone, which no Ingress routes.
 */
const TOKEN = 'sync-token-for-the-internal-port-test';

describe('the standby mode endpoint on its own port', () => {
  let standby: RunningStandby;
  const setMode = (base: string | undefined, mode: string) =>
    fetch(`${base}/internal/v1/mode`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode }),
    });

  beforeAll(async () => {
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: 'http://127.0.0.1:9',
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_INTERNAL_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
        STANDBY_SYNC_TOKEN: TOKEN,
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { logger: pino({ level: 'silent' }) },
    );
  });
  afterAll(async () => {
    await standby?.close();
  });

  it('the public (role) ports answer 404 for /internal/*, even with the right token', async () => {
    for (const base of [standby.urls.bypass, standby.urls.fallback]) {
      const res = await setMode(base, 'serve');
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
    expect(standby.health.status().mode).toBe('auto');
  });

  it('the internal port takes the mode (with the token), and refuses without it', async () => {
    expect(standby.urls.internal).toBeDefined();
    const res = await setMode(standby.urls.internal, 'serve');
    expect(res.status).toBe(200);
    expect(standby.health.status().mode).toBe('serve');
    const anonymous = await fetch(`${standby.urls.internal}/internal/v1/mode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'auto' }),
    });
    expect(anonymous.status).toBe(401);
    expect(standby.health.status().mode).toBe('serve');
  });
});
