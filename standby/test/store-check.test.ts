import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

const run = await databaseAvailable();

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/*
 * Without STANDBY_STORE_URL the outages a standby records and the offline_ tokens it spends stay in its
 * own memory: after a recovery the main API refuses every outage token. Refused at start in production
 * (NODE_ENV=production, the container images), else said in the start-up output, /readyz and /status (which
 * the console shows), and on the main API's side in its /readyz and the console's standby status.
 */
describe.runIf(run)('a store that would lose outage tokens is never silent', { timeout: 60_000 }, () => {
  let api: TestApi | undefined;
  let standby: RunningStandby | undefined;
  const savedEnv = process.env.NODE_ENV;
  afterEach(async () => {
    process.env.NODE_ENV = savedEnv;
    await standby?.close();
    await api?.close();
    standby = undefined;
    api = undefined;
  });

  const standbyConfig = (mainUrl: string) =>
    loadStandbyConfig({
      MAIN_API_URL: mainUrl,
      STANDBY_BYPASS_PORT: '0',
      STANDBY_FALLBACK_PORT: '0',
      STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-store-')),
      STANDBY_SYNC_TOKEN: 'st_a-sync-token-long-enough-for-the-check',
    });

  it('a standby process without STANDBY_STORE_URL: a warning line, /readyz and /status say so', async () => {
    api = await startTestApi();
    const { logger, lines } = recordingLogger();
    standby = await startStandby({ ...standbyConfig(api.url), syncToken: api.runtime.syncToken }, { logger });
    const warned = lines.filter((l) => l.level === 40 && l.msg.includes('STANDBY_STORE_URL is not set'));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toMatch(/refuses every offline_ token after it recovers/);
    for (const url of [standby.urls.bypass!, standby.urls.fallback!]) {
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect((await ready.json()).store).toEqual({ shared: false, warning: warned[0]!.msg });
      expect((await (await fetch(`${url}/status`)).json()).store).toMatchObject({ shared: false });
    }
  });

  it('a standby process without STANDBY_STORE_URL is refused at start in production', async () => {
    process.env.NODE_ENV = 'production';
    await expect(
      startStandby(standbyConfig('http://127.0.0.1:9'), { logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/STANDBY_STORE_URL is not set/);
  });

  it('the main API publishing standby hosts without STANDBY_STORE_URL: /readyz and the console say so', async () => {
    api = await startTestApi({ STANDBY_BYPASS_URLS: 'http://127.0.0.1:9' });
    const ready = await (await fetch(`${api.url}/readyz`)).json();
    expect(ready.standby_store.shared).toBe(false);
    expect(ready.standby_store.warning).toMatch(
      /STANDBY_STORE_URL is not set while standby hosts are published/,
    );
    const status = await fetch(`${api.url}/admin/v1/standby/status`, {
      headers: { Authorization: `Bearer ${api.runtime.adminToken}` },
    });
    expect(status.status).toBe(200);
    expect((await status.json()).data.api_store).toEqual(ready.standby_store);
  });

  it('the main API publishing standby hosts without STANDBY_STORE_URL is refused at start in production', async () => {
    process.env.NODE_ENV = 'production';
    await expect(startTestApi({ STANDBY_FALLBACK_URLS: 'http://127.0.0.1:9' })).rejects.toThrow(
      /STANDBY_STORE_URL is not set while standby hosts are published/,
    );
  });

  it('no warning where nothing is lost: no standby published, or one sharing the process (npm start)', async () => {
    api = await startTestApi();
    expect((await (await fetch(`${api.url}/readyz`)).json()).standby_store).toEqual({
      shared: true,
      warning: null,
    });
    const { logger, lines } = recordingLogger();
    standby = await startStandby(
      { ...standbyConfig(api.url), syncToken: api.runtime.syncToken },
      { logger, store: api.runtime.offlineStore, trust: api.runtime.offlineTrust },
    );
    expect(lines.filter((l) => l.msg.includes('STANDBY_STORE_URL'))).toEqual([]);
    expect((await (await fetch(`${standby.urls.fallback}/readyz`)).json()).store).toEqual({
      shared: true,
      warning: null,
    });
  });
});
