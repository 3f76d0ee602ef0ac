import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_URL, redisAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/*
 * With one Redis for every region, its loss would take every region's continuity path. With a store
 * per region (the chart's default, the operator's standbyStoreSecretRef), a region whose
 * store is gone fails closed on its own while the other region's standby stays ready. Real Redis.
 */
const run = await redisAvailable('the standby store per region test');

describe.runIf(run)('a standby store per region: one region losing its store leaves the other ready', () => {
  let api: TestApi;
  const standbys: Record<'eu' | 'us', RunningStandby | undefined> = { eu: undefined, us: undefined };
  const start = (region: string, storeUrl: string) =>
    startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        STANDBY_STORE_URL: storeUrl,
        GATEHOUSE_REGION: region,
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { logger: pino({ level: 'silent' }) },
    );

  beforeAll(async () => {
    api = await startTestApi({ STANDBY_REGIONS: 'eu,us' });
    standbys.eu = await start('eu', REDIS_URL);
    // Region us's own store is down (nothing listens there).
    standbys.us = await start('us', 'redis://127.0.0.1:1/0');
  }, 60_000);
  afterAll(async () => {
    await standbys.eu?.close();
    await standbys.us?.close();
    await api?.close();
  });

  it('us (store down) is not ready; eu (its own store) is ready and serves', async () => {
    const ready = async (s: RunningStandby | undefined) => (await fetch(`${s?.urls.bypass}/readyz`)).status;
    expect(await ready(standbys.eu)).toBe(200);
    expect(await ready(standbys.us)).toBe(503);
    standbys.eu?.health.setMode('serve');
    const init = await fetch(`${standbys.eu?.urls.bypass}/v1/challenge/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app_key: 'ak_unknown', action: 'login' }),
    });
    // Served by the standby (an unknown app is refused as such), not "service_online" or unavailable.
    const body = (await init.json()) as { error?: string };
    expect(body.error).not.toBe('service_online');
    expect(init.status).not.toBe(503);
  });
});
