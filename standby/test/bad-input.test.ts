import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzEndpoints } from '../../api/test/fuzz-requests.ts';
import { startTestApi, type TestApi } from '../../api/test/harness.ts';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

describe('standby endpoints under random input', () => {
  let api: TestApi;
  let standby: RunningStandby;
  let auth: Record<string, string>;
  let appKey: string;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name: 'fuzz', test_mode: true });
    appKey = app.appKey;
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-fuzz-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { logger: pino({ level: 'silent' }) },
    );
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  for (const serving of [true, false]) {
    it(`never answers 5xx (but service_online while online), always an envelope: serving=${serving}`, async () => {
      standby.health.setMode(serving ? 'serve' : 'online');
      for (const [role, paths] of [
        ['bypass', ['/v1/challenge/init', '/v1/challenge/submit', '/internal/v1/mode']],
        ['fallback', ['/api/validate', '/internal/v1/mode']],
      ] as const) {
        const requests = await fuzzEndpoints({
          baseUrl: standby.urls[role]!,
          paths: [...paths],
          fields: [
            'app_key',
            'action',
            'platform',
            'challenge_id',
            'challenge',
            'pow',
            'answer',
            'pass_token',
            'client_ip',
            'idempotency_key',
            'mode',
          ],
          interesting: [appKey, 'login', 'offline_a.b', 'pt_a.b', 'ch_x', 'serve', '203.0.113.9'],
          headers: () => auth,
          allowed5xx: serving ? [] : [503],
          numRuns: 150,
        });
        expect(requests).toBeGreaterThanOrEqual(150);
      }
      expect((await fetch(`${standby.urls.fallback}/healthz`)).status).toBe(200);
    }, 180_000);
  }
});
