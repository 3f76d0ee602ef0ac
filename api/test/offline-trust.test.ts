import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { offlineKeysFor, type StandbyKeyEntry } from '@gatehouse/core/standby-keys';
import { OFFLINE_TOKEN_MAX_LIFETIME_SECONDS } from '@gatehouse/core/tokens';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { standbyKeyCommand } from '../src/cli/commands/standby-key.ts';
import { loadConfig } from '../src/config.ts';
import { mintDegradedToken } from '../src/tokens/degraded-tokens.ts';
import {
  databaseAvailable,
  type Json,
  postJson,
  REDIS_URL,
  redisAvailable,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * What an offline_ or dg_ token is trusted for, through real HTTP: the main API (PGlite or
 * PostgreSQL, per vitest project), a standby with both roles and Redis as the shared store (consumption,
 * outage log, revocations), as in production. Each run uses its own region, so the outage windows other
 * suites record in the same Redis never cover its tokens.
 */
const run = (await databaseAvailable()) && (await redisAvailable('the offline trust suite'));

type Creds = { appKey: string; appSecret: string; appId: string };

describe.runIf(run)('offline_ trust: lifetime cap, recorded outages, region keys, sync credential', () => {
  const region = `t-${randomBytes(5).toString('hex')}`;
  let api: TestApi;
  let standby: RunningStandby;
  let app: Creds;
  let auth: Record<string, string>;
  const admin = () => ({ Authorization: `Bearer ${api.runtime.adminToken}` });
  const sync = () => ({ Authorization: `Bearer ${api.runtime.syncToken}` });

  beforeAll(async () => {
    api = await startTestApi({
      STANDBY_STORE_URL: REDIS_URL,
      GATEHOUSE_REGION: region,
      // A second region's standby reads this API too ('another region never verifies...').
      STANDBY_REGIONS: `${region}-b`,
    });
    app = await api.createApp({ name: 'offline-trust', test_mode: true });
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        GATEHOUSE_REGION: region,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_STORE_URL: REDIS_URL,
        // Probes once at start (the main API is up); outages are the operator's `serve` in these tests.
        STANDBY_PROBE_INTERVAL_MS: '60000',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-trust-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { logger: pino({ level: 'silent' }) },
    );
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close();
  });

  /** The region's active key, as the standby holds it (read with the sync credential). */
  async function regionKey(): Promise<StandbyKeyEntry> {
    const res = await fetch(`${api.url}/internal/v1/standby/snapshot?region=${region}`, { headers: sync() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    return (body.data.offline_keys as StandbyKeyEntry[]).find((k) => k.status === 'active')!;
  }

  /** What someone holding the region key could sign: any lifetime, any issue time. */
  function forge(key: StandbyKeyEntry, iat: number, lifetime: number): string {
    return offlineKeysFor(key).seal({
      id: `ch_${randomBytes(8).toString('hex')}`,
      app: app.appId,
      act: 'login',
      iat,
      exp: iat + lifetime,
      ip: '127.0.0.1',
      plat: 'web',
      ref: null,
      score: 40,
    });
  }

  /** A genuine token from the bypass role (the standby must be serving). */
  async function mint(): Promise<string> {
    const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
      app_key: app.appKey,
      action: 'login',
    });
    expect(init.status).toBe(200);
    const submit = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
      app_key: app.appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
      pow: await solvePuzzle(init.body.data.pow as Puzzle),
    });
    expect(submit.status, JSON.stringify(submit.body)).toBe(200);
    return submit.body.data.pass_token as string;
  }

  const atMain = (token: string) => api.post('/v1/validate', { pass_token: token }, auth);
  const atFallback = (token: string) =>
    postJson(`${standby.urls.fallback}/api/validate`, { pass_token: token }, auth);

  function expectRefused(res: { status: number; body: Json }, error = 'token_not_found') {
    expect(res.body.code, JSON.stringify(res.body)).toBe(-1);
    expect(res.body.error).toBe(error);
    expect(res.body.data?.valid).not.toBe(true);
  }

  async function outage<T>(fn: () => Promise<T>): Promise<T> {
    standby.health.setMode('serve');
    try {
      return await fn();
    } finally {
      standby.health.setMode('auto');
    }
  }

  describe('sync credential', () => {
    it('the snapshot refuses the admin token and serves the sync credential: its region keys, no master-derived key', async () => {
      const url = `${api.url}/internal/v1/standby/snapshot?region=${region}`;
      expect((await fetch(url, { headers: admin() })).status).toBe(401);
      expect((await fetch(url)).status).toBe(401);
      const res = await fetch(url, { headers: sync() });
      expect(res.status).toBe(200);
      const data = ((await res.json()) as Json).data;
      expect(data.region).toBe(region);
      expect(data.offline_key).toBeUndefined();
      expect(data.offline_keys.length).toBeGreaterThan(0);
      for (const key of data.offline_keys) expect(key.region).toBe(region);
      expect(
        (await fetch(`${api.url}/internal/v1/standby/snapshot?region=NOT_OK`, { headers: sync() })).status,
      ).toBe(400);
    });

    it('a region credential (derived, sr_) reads its own region only, and a standby runs on it', async () => {
      const got = await postJson(`${api.url}/admin/v1/standby-keys/sync-credential`, { region }, admin());
      expect(got.status).toBe(200);
      expectMatchesOpenApi('/admin/v1/standby-keys/sync-credential', 'post', got);
      const credential = got.body.data.sync_token as string;
      expect(credential).toMatch(/^sr_/);
      const own = { Authorization: `Bearer ${credential}` };
      const snapshot = (r: string) =>
        fetch(`${api.url}/internal/v1/standby/snapshot?region=${r}`, { headers: own });
      expect((await snapshot(region)).status).toBe(200);
      expect((await snapshot(`${region}-other`)).status).toBe(401);
      expect((await snapshot('default')).status).toBe(401);
      // Only the admin token gets one.
      expect(
        (await postJson(`${api.url}/admin/v1/standby-keys/sync-credential`, { region }, sync())).status,
      ).toBe(401);
      const scoped = await startStandby(
        loadStandbyConfig({
          MAIN_API_URL: api.url,
          GATEHOUSE_REGION: region,
          STANDBY_ROLE: 'fallback',
          STANDBY_FALLBACK_PORT: '0',
          STANDBY_STORE_URL: REDIS_URL,
          STANDBY_PROBE_INTERVAL_MS: '60000',
          STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-scoped-')),
          STANDBY_SYNC_TOKEN: credential,
        }),
        { logger: pino({ level: 'silent' }) },
      );
      try {
        expect(scoped.snapshots.status()).toMatchObject({ loaded: true, region });
      } finally {
        await scoped.close();
      }
    });

    it('is generated (st_, 0600 file) when unset, and the API refuses to start with it equal to the admin token', async () => {
      expect(api.runtime.syncToken).toMatch(/^st_/);
      const file = join(api.config.dataDir, 'standby-sync-token');
      expect(readFileSync(file, 'utf8').trim()).toBe(api.runtime.syncToken);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(api.runtime.syncToken).not.toBe(api.runtime.adminToken);
      const same = 'x'.repeat(40);
      await expect(
        bootstrap(
          loadConfig({
            DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-same-')),
            PGLITE_DIR: 'memory://',
            GATEHOUSE_ADMIN_TOKEN: same,
            STANDBY_SYNC_TOKEN: same,
          }),
          pino({ level: 'silent' }),
        ),
      ).rejects.toThrow(/STANDBY_SYNC_TOKEN must differ/);
    });
  });

  describe('recorded outages', () => {
    it('a well-formed offline_ token signed with the region key, minted with no recorded outage, is refused', async () => {
      const key = await regionKey();
      const token = forge(key, Math.floor(Date.now() / 1000), 300);
      expectRefused(await atMain(token));
      // Online, the fallback does not vouch for it: service_online, as for anything it cannot vouch for.
      const fallback = await atFallback(token);
      expect(fallback.status).toBe(503);
      expect(fallback.body.error).toBe('service_online');
    });

    it('during an outage, a token claiming to be minted well before it began is refused at both', async () => {
      const key = await regionKey();
      await outage(async () => {
        // Still alive (300 s lifetime), but minted 4 minutes ago, when no outage was recorded.
        const before = forge(key, Math.floor(Date.now() / 1000) - 240, 300);
        expectRefused(await atMain(before));
        expectRefused(await atFallback(before));
        // The same key, minted now, inside the window: accepted once across both.
        const inside = forge(key, Math.floor(Date.now() / 1000), 300);
        expect((await atFallback(inside)).body.data).toMatchObject({ valid: true, offline: true });
        expectRefused(await atMain(inside), 'token_already_used');
      });
    });
  });

  describe(`lifetime cap of ${OFFLINE_TOKEN_MAX_LIFETIME_SECONDS} s`, () => {
    it('a token signed with the region key with exp one year ahead is refused at the main API and the fallback', async () => {
      const key = await regionKey();
      await outage(async () => {
        const now = Math.floor(Date.now() / 1000);
        expectRefused(await atMain(forge(key, now, 365 * 86_400)));
        expectRefused(await atFallback(forge(key, now, 365 * 86_400)));
        expectRefused(await atMain(forge(key, now, OFFLINE_TOKEN_MAX_LIFETIME_SECONDS + 1)));
        // A real key signed them: counted as an alarm, by reason, for whoever watches the metrics.
        const metrics = await (await fetch(`${api.url}/metrics`)).text();
        expect(metrics).toMatch(/gatehouse_offline_genuine_refused_total\{reason="lifetime_over_cap"\} 2/);
        // The cap itself is accepted: what refuses the others is their lifetime, nothing else.
        const capped = await atMain(forge(key, now, OFFLINE_TOKEN_MAX_LIFETIME_SECONDS));
        expect(capped.body.data).toMatchObject({ valid: true, offline: true });
      });
    });

    it('the bypass mints exactly the capped lifetime', async () => {
      const token = await outage(mint);
      const payload = JSON.parse(Buffer.from(token.slice(8).split('.')[0]!, 'base64url').toString());
      expect(payload.exp - payload.iat).toBe(OFFLINE_TOKEN_MAX_LIFETIME_SECONDS);
      expect(payload.kid).toBe((await regionKey()).kid);
    });
  });

  describe('region keys: rotate and revoke without the master key', () => {
    it('the key routes need the admin token and never show key material', async () => {
      expect((await fetch(`${api.url}/admin/v1/standby-keys`)).status).toBe(401);
      expect((await fetch(`${api.url}/admin/v1/standby-keys`, { headers: sync() })).status).toBe(401);
      const res = await fetch(`${api.url}/admin/v1/standby-keys`, { headers: admin() });
      const list = (await res.json()) as Json;
      expectMatchesOpenApi('/admin/v1/standby-keys', 'get', {
        status: res.status,
        body: list,
        headers: res.headers,
      });
      const mine = list.data.keys.filter((k: Json) => k.region === region);
      expect(mine.length).toBeGreaterThan(0);
      for (const k of mine) expect(k.key).toBeUndefined();
      expect(JSON.stringify(list)).not.toContain((await regionKey()).key);
    });

    it('a revoked key is refused at once at the main API and the fallback; the bypass mints again with its replacement', async () => {
      const { token, fresh } = await outage(async () => ({ token: await mint(), fresh: await mint() }));
      const old = await regionKey();
      const revoked = await postJson(`${api.url}/admin/v1/standby-keys/${old.kid}/revoke`, {}, admin());
      expect(revoked.status).toBe(200);
      expectMatchesOpenApi('/admin/v1/standby-keys/{kid}/revoke', 'post', revoked);
      expect(revoked.body.data).toMatchObject({ kid: old.kid, status: 'revoked' });

      await outage(async () => {
        // No snapshot refresh needed: every checker reads the revocation in the shared store.
        expectRefused(await atMain(token));
        expectRefused(await atFallback(fresh));
        // The standby still holds the revoked key until its next snapshot: it refuses to mint with it.
        const init = await postJson(`${standby.urls.bypass}/v1/challenge/init`, {
          app_key: app.appKey,
          action: 'login',
        });
        const submit = await postJson(`${standby.urls.bypass}/v1/challenge/submit`, {
          app_key: app.appKey,
          challenge_id: init.body.data.challenge_id,
          challenge: init.body.data.challenge,
          pow: await solvePuzzle(init.body.data.pow as Puzzle),
        });
        expect(submit.status).toBe(503);
        expect(submit.body.error).toBe('service_unavailable');
      });

      await standby.snapshots.refresh();
      const replacement = await regionKey();
      expect(replacement.kid).not.toBe(old.kid);
      expect(standby.snapshots.status().active_key).toBe(replacement.kid);
      const again = await outage(mint);
      expect((await atMain(again)).body.data).toMatchObject({ valid: true, offline: true });
    });

    it('a rotation keeps what the old key minted valid, and the new key mints from the next snapshot', async () => {
      const before = await outage(mint);
      const old = await regionKey();
      const rotated = await postJson(`${api.url}/admin/v1/standby-keys/rotate`, { region }, admin());
      expect(rotated.status).toBe(200);
      expectMatchesOpenApi('/admin/v1/standby-keys/rotate', 'post', rotated);
      expect(rotated.body.data).toMatchObject({ region, status: 'active' });
      expect(rotated.body.data.kid).not.toBe(old.kid);
      await standby.snapshots.refresh();
      const after = await outage(mint);
      expect(JSON.parse(Buffer.from(after.slice(8).split('.')[0]!, 'base64url').toString()).kid).toBe(
        rotated.body.data.kid,
      );
      await outage(async () => {
        expect((await atFallback(before)).body.data).toMatchObject({ valid: true });
        expect((await atFallback(after)).body.data).toMatchObject({ valid: true });
      });
      expect(
        (await postJson(`${api.url}/admin/v1/standby-keys/rotate`, { region: 'Bad Region' }, admin())).status,
      ).toBe(400);
      expect((await postJson(`${api.url}/admin/v1/standby-keys/nope/revoke`, {}, admin())).status).toBe(404);
    });

    it('gatehouse standby-key list, rotate and revoke drive the same admin routes', async () => {
      const cli = async (...argv: string[]) => {
        let out = '';
        const code = await standbyKeyCommand.run(argv, {
          out: (t) => {
            out += t;
          },
          err: () => {},
          env: { GATEHOUSE_URL: api.url, GATEHOUSE_ADMIN_TOKEN: api.runtime.adminToken },
          cwd: tmpdir(),
        });
        return { code, out };
      };
      const credential = await cli('credential', '--region', region);
      expect(credential.out).toMatch(/^STANDBY_SYNC_TOKEN=sr_[A-Za-z0-9_-]{43}\n$/);
      const rotated = await cli('rotate', '--region', region, '--json');
      expect(rotated.code).toBe(0);
      const key = JSON.parse(rotated.out);
      expect(key).toMatchObject({ region, status: 'active' });
      const listed = await cli('list');
      expect(listed.out).toMatch(new RegExp(`${key.kid}\\s+${region}\\s+active`));
      const revoked = await cli('revoke', key.kid);
      expect(revoked.out).toContain(`Revoked: every checker refuses ${key.kid}'s tokens now.`);
      expect((await regionKey()).kid).not.toBe(key.kid);
      await standby.snapshots.refresh();
      await expect(cli('rotate')).rejects.toThrow(/Missing --region/);
    });

    it('another region never verifies this region’s tokens', async () => {
      const token = await outage(mint);
      const elsewhere = await startStandby(
        loadStandbyConfig({
          MAIN_API_URL: api.url,
          GATEHOUSE_REGION: `${region}-b`,
          STANDBY_ROLE: 'fallback',
          STANDBY_FALLBACK_PORT: '0',
          STANDBY_STORE_URL: REDIS_URL,
          STANDBY_PROBE_INTERVAL_MS: '60000',
          STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-trust-b-')),
          STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        }),
        { logger: pino({ level: 'silent' }) },
      );
      try {
        elsewhere.health.setMode('serve');
        const res = await postJson(`${elsewhere.urls.fallback}/api/validate`, { pass_token: token }, auth);
        expectRefused(res);
      } finally {
        await elsewhere.close();
      }
    });
  });

  describe('after recovery', () => {
    it('the fallback validates an outage-minted offline_ token whatever the main API’s state, once; anything else gets service_online', async () => {
      const [first, second] = await outage(async () => [await mint(), await mint()]);
      expect(standby.health.status()).toMatchObject({ main: 'up', serving: false });
      const res = await atFallback(first);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ valid: true, offline: true, action: 'login' });
      expectRefused(await atFallback(first), 'token_already_used');
      expectRefused(await atMain(first), 'token_already_used');
      // Consumption is shared: used at the main API, refused at the fallback.
      expect((await atMain(second)).body.data).toMatchObject({ valid: true });
      expectRefused(await atFallback(second), 'token_already_used');
      for (const other of ['pt_abc.def', 'offline_x.y', 'dg_a.b']) {
        const answer = await atFallback(other);
        expect(answer.status).toBe(503);
        expect(answer.body.error).toBe('service_online');
      }
    });
  });

  describe('dg_', () => {
    it('an expired dg_ is the token_expired error, never code 0; a fresh one still answers degraded', async () => {
      const old = mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login', Date.now() - 6 * 60_000);
      expectRefused(await atMain(old), 'token_expired');
      const fresh = await atMain(mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login'));
      expect(fresh.body).toMatchObject({ code: 0, data: { valid: false, degraded: true, expired: false } });
    });
  });
});
