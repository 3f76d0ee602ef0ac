import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/* The standby's log at info holds what clients did, not the probes that poll it every second. */
describe('standby request log', () => {
  let api: TestApi;
  let standby: RunningStandby;
  const lines: { msg: string; path?: string; level: number }[] = [];

  beforeAll(async () => {
    api = await startTestApi();
    const capture = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-log-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { logger: pino({ level: 'info' }, capture) },
    );
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  it('does not log /healthz, /readyz or /metrics at info, and logs other requests', async () => {
    for (const role of ['bypass', 'fallback'] as const) {
      for (const path of ['/healthz', '/readyz', '/metrics']) await fetch(standby.urls[role]! + path);
      await fetch(`${standby.urls[role]!}/status`);
    }
    const logged = lines.filter((l) => l.msg === 'request').map((l) => l.path);
    expect(logged.filter((p) => p === '/status')).toHaveLength(2);
    for (const probe of ['/healthz', '/readyz', '/metrics']) expect(logged).not.toContain(probe);
  });

  it("says which region it serves in /status, for the main API's console", async () => {
    const status = (await (await fetch(`${standby.urls.bypass!}/status`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ role: 'bypass', region: expect.any(String), main: expect.any(String) });
  });
});
