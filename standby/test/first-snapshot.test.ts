import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/*
 * On real pods a standby often starts before its main API answers. Its first snapshot fetch failed, and
 * it fetched again only on the periodic refresh, which a standby the operator has told to serve never
 * makes: it stayed without a snapshot (unable to serve anything) for good, and even when online the first
 * snapshot waited for the next refresh (30 s), which kept an App from going Ready within a minute.
 */
const run = await databaseAvailable();

describe.runIf(run)('a standby that starts before its main API', () => {
  let api: TestApi;
  let standby: RunningStandby;

  beforeAll(async () => {
    api = await startTestApi();
    await api.pause();
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-first-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        // No periodic refresh within the test: only the first-snapshot retry can fetch.
        STANDBY_SNAPSHOT_INTERVAL_MS: '3600000',
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { logger: pino({ level: 'silent' }) },
    );
  }, 60_000);
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  it('gets its first snapshot once the main API answers, also when told to serve', async () => {
    expect(standby.snapshots.snapshot).toBeNull();
    standby.health.setMode('serve');
    await api.resume();
    let loaded = false;
    for (let i = 0; i < 100 && !loaded; i++) {
      const status = (await (await fetch(`${standby.urls.fallback}/status`)).json()) as {
        snapshot: { loaded: boolean };
      };
      loaded = status.snapshot.loaded;
      if (!loaded) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(loaded).toBe(true);
  });
});
