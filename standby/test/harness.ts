import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/** A real main API with one test-mode app, and a standby (both roles on port 0) syncing from it. */
export interface StandbyWithApi {
  readonly api: TestApi;
  readonly standby: RunningStandby;
  readonly appKey: string;
  /** The app's X-App-Key / X-App-Secret headers. */
  readonly auth: Record<string, string>;
}

/**
 * Starts both in the calling describe's beforeAll (the app named `name`, the standby's data in a fresh
 * temporary folder) and closes them in its afterAll; the fields are there once the first test runs.
 */
export function standbyWithApi(name: string): StandbyWithApi {
  let api: TestApi;
  let standby: RunningStandby;
  let appKey: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name, test_mode: true });
    appKey = app.appKey;
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), `standby-${name}-`)),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { logger: pino({ level: 'silent' }) },
    );
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  return {
    get api() {
      return api;
    },
    get standby() {
      return standby;
    },
    get appKey() {
      return appKey;
    },
    get auth() {
      return auth;
    },
  };
}
