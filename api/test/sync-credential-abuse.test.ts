import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import {
  AUTH_THROTTLE_DEFAULTS,
  databaseAvailable,
  type Json,
  postFrom,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * The standby's sync credential unlocks every app's credential hashes and a region's signing keys, and
 * the standby's mode switch decides where a region's traffic goes. An outside probe sent 40 wrong sync
 * credentials to /internal/v1/standby/snapshot and 15 wrong tokens to the standby's /internal/v1/mode and
 * was never throttled; and each snapshot read naming a new region created a signing key (5 reads, 5 keys).
 */
const run = await databaseAvailable();

const GUESSER = '127.0.0.31';
const STANDBY_HOST = '127.0.0.32';

describe.runIf(run)('the sync credential and the mode switch under abuse', () => {
  let api: TestApi;
  let standby: RunningStandby;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    api = await startTestApi({ ...AUTH_THROTTLE_DEFAULTS, STANDBY_REGIONS: 'eu-west' });
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-abuse-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { logger: pino({ level: 'silent' }) },
    );
  }, 60_000);
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  const snapshot = (from: string, token: string, region = 'default') =>
    postFrom(
      from,
      `${api.url}/internal/v1/standby/snapshot?region=${region}`,
      undefined,
      bearer(token),
      'GET',
    );

  it('wrong sync credentials meet 429; the standby from its own address keeps reading', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      statuses.push((await snapshot(GUESSER, `st_wrong-${i}-wrong-wrong-wrong`)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(30).fill(429));
    // Refused before it is checked: even the right credential from the guesser's address.
    expect((await snapshot(GUESSER, api.runtime.syncToken)).status).toBe(429);
    const own = await snapshot(STANDBY_HOST, api.runtime.syncToken);
    expect(own.status).toBe(200);
    expect(own.body.data.region).toBe('default');
  });

  it('a snapshot read creates a signing key only for a region this instance serves', async () => {
    const keysOf = async () =>
      (
        (await (
          await fetch(`${api.url}/admin/v1/standby-keys`, { headers: bearer(api.runtime.adminToken) })
        ).json()) as Json
      ).data.keys as { region: string }[];
    const before = await keysOf();
    for (const region of ['mars-1', 'mars-2', 'mars-3', 'mars-4', 'mars-5']) {
      const res = await snapshot(STANDBY_HOST, api.runtime.syncToken, region);
      expect(res.status, region).toBe(404);
      expect(res.body.error).toBe('not_found');
      expect(res.body.message).toContain('STANDBY_REGIONS');
    }
    const after = await keysOf();
    expect(after.filter((k) => k.region.startsWith('mars-'))).toEqual([]);
    expect(after.length).toBe(before.length);
    // A declared region gets its key on first read, as the instance's own region did.
    const declared = await snapshot(STANDBY_HOST, api.runtime.syncToken, 'eu-west');
    expect(declared.status).toBe(200);
    expect(declared.body.data.offline_keys.map((k: Json) => k.region)).toEqual(['eu-west']);
  });

  it("the standby's mode switch refuses a source after 10 wrong tokens; the operator's own address still switches", async () => {
    const mode = (from: string, token: string) =>
      postFrom(from, `${standby.urls.fallback}/internal/v1/mode`, { mode: 'auto' }, bearer(token));
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await mode(GUESSER, `wrong-token-${i}-wrong-wrong`)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(5).fill(429));
    const refused = await mode(GUESSER, api.runtime.syncToken);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limited');
    expect((await mode(STANDBY_HOST, api.runtime.syncToken)).status).toBe(200);
  });
});
