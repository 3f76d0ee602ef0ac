import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTION, startBackend } from './failover/backend.ts';
import { type Minted, VerificationStream } from './failover/stream.ts';
import {
  databaseAvailable,
  freshPostgresDatabase,
  type Json,
  REDIS_URL,
  redisAvailable,
  TEST_DATABASE,
} from './harness.ts';
import { freePort, Child as NodeProcess, waitUntilReady } from './processes.ts';

/**
 * The failover drill (docs/failover.md): the main API, two bypass and two fallback standby
 * processes and a protected backend; a steady stream of real verifications (the headless client speaks
 * the widget's protocol, the backend validates with the Node SDK); SIGKILL of the main API in the middle;
 * verifications go on through the standby; the main API restarts on the same database; clients come back.
 *
 * Asserted: no end-user verification failed (a `co_` token counts as a failure: the standby was up),
 * every token was accepted exactly once (each is validated a second time at the end: token_already_used,
 * offline_ tokens at the main API too), nothing minted during the outage was lost. Printed: the time to
 * switch over (kill → first offline_ accepted) and to switch back (restart → first pt_ accepted).
 */

const run =
  (await databaseAvailable()) && (await redisAvailable("the failover drill (the standby's shared store)"));
const FAST_PROBES = {
  STANDBY_PROBE_INTERVAL_MS: '100',
  STANDBY_PROBE_TIMEOUT_MS: '500',
  STANDBY_FAIL_AFTER: '3',
  STANDBY_RECOVER_AFTER: '3',
};

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`drill: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(run)(`failover drill (main API killed and restarted; ${TEST_DATABASE})`, () => {
  const adminToken = randomBytes(24).toString('base64url');
  // The standby's own credential for the snapshot: never the admin token.
  const syncToken = `st_${randomBytes(24).toString('base64url')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-drill-'));
  let drop: (() => Promise<void>) | undefined;
  let apiEnv: Record<string, string>;
  let mainUrl: string;
  let api: NodeProcess;
  const standbys: { role: 'bypass' | 'fallback'; url: string; proc: NodeProcess }[] = [];
  let backend: Awaited<ReturnType<typeof startBackend>>;
  let app: { appKey: string; appSecret: string };
  let stream: VerificationStream | undefined;
  const setup = { apiReadyMs: 0, standbysReadyMs: 0 };

  const startApi = async () => {
    api = new NodeProcess('main API', 'api/src/server.ts', apiEnv);
    await waitUntilReady(api, `${mainUrl}/readyz`, 90_000);
  };

  beforeAll(async () => {
    const [apiPort, ...ports] = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
    mainUrl = `http://127.0.0.1:${apiPort}`;
    const roles = ['bypass', 'bypass', 'fallback', 'fallback'] as const;
    roles.forEach((role, i) => {
      standbys.push({ role, url: `http://127.0.0.1:${ports[i]}`, proc: undefined as never });
    });
    const urls = (role: string) =>
      standbys
        .filter((s) => s.role === role)
        .map((s) => s.url)
        .join(',');
    apiEnv = {
      HOST: '127.0.0.1',
      PORT: String(apiPort),
      DATA_DIR: dataDir,
      GATEHOUSE_ADMIN_TOKEN: adminToken,
      STANDBY_SYNC_TOKEN: syncToken,
      STANDBY_STORE_URL: REDIS_URL,
      STANDBY_BYPASS_URLS: urls('bypass'),
      STANDBY_FALLBACK_URLS: urls('fallback'),
    };
    if (TEST_DATABASE === 'postgres') {
      const fresh = await freshPostgresDatabase();
      apiEnv.DATABASE_URL = fresh.url;
      drop = fresh.drop;
    }
    // The standby processes boot beside the main API. They serve nothing before they have seen it up and
    // hold its snapshot (refreshed every second here, so the app created below reaches them quickly).
    const started = Date.now();
    standbys.forEach((s, i) => {
      const port = new URL(s.url).port;
      s.proc = new NodeProcess(`standby ${s.role} ${(i % 2) + 1}`, 'standby/src/server.ts', {
        ...FAST_PROBES,
        STANDBY_ROLE: s.role,
        STANDBY_HOST: '127.0.0.1',
        STANDBY_BYPASS_PORT: s.role === 'bypass' ? port : '0',
        STANDBY_FALLBACK_PORT: s.role === 'fallback' ? port : '0',
        MAIN_API_URL: mainUrl,
        STANDBY_DATA_DIR: join(dataDir, `standby-${i}`),
        STANDBY_STORE_URL: REDIS_URL,
        STANDBY_SYNC_TOKEN: syncToken,
        STANDBY_SNAPSHOT_INTERVAL_MS: '1000',
      });
    });
    await startApi();
    setup.apiReadyMs = Date.now() - started;

    // A test-mode app (invisible tier; a one-hash puzzle on the standby), without the per-IP rate limit:
    // every end user of the drill comes from 127.0.0.1.
    const created = await fetch(`${mainUrl}/admin/v1/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'failover-drill',
        test_mode: true,
        risk_policy: { rate_limit: { ip_per_minute: 1_000_000, high_risk_ip_per_minute: 1_000_000 } },
      }),
    });
    const body = (await created.json()) as Json;
    expect(created.status, JSON.stringify(body)).toBe(201);
    app = { appKey: body.data.app_key, appSecret: body.data.app_secret };

    // Ready: the store answers, the main API is seen up (service_online), the snapshot holds the app.
    await Promise.all(
      standbys.map(async (s) => {
        await waitUntilReady(s.proc, `${s.url}/readyz`, 90_000);
        await waitUntilReady(
          s.proc,
          `${s.url}/status`,
          30_000,
          (status) => status.serving === false && status.snapshot.apps >= 1,
        );
      }),
    );
    setup.standbysReadyMs = Date.now() - started;
    backend = await startBackend({ mainUrl, ...app });
  }, 180_000);

  afterAll(async () => {
    await stream?.stop();
    await backend?.close();
    await Promise.all([api, ...standbys.map((s) => s.proc)].filter(Boolean).map((p) => p.stop('SIGTERM')));
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('no end-user verification fails; every token is accepted exactly once; nothing minted is lost', async () => {
    const s = new VerificationStream({
      mainUrl,
      backendUrl: backend.url,
      appKey: app.appKey,
      users: 3,
      pauseMs: 25,
    });
    stream = s;
    const accepted = (route: string, after: number) =>
      s.minted.filter((m) => m.answer.accepted && m.route === route && m.mintedAt >= after);
    const t0 = Date.now();

    // 1. Steady state: pt_ tokens through the main API.
    s.start();
    await until('10 verifications through the main API', () => accepted('main', t0).length >= 10, 30_000);

    // A pt_ token solved just before the crash and presented only after the restart: it must survive.
    const heldPass = await solveChallenge({ baseUrl: mainUrl, appKey: app.appKey, action: ACTION });
    expect(heldPass.route).toBe('main');

    // 2. The main API dies without a word.
    const killAt = Date.now();
    const watcher = standbys[0]!;
    const servingAt = (async () => {
      while (Date.now() - killAt < 30_000) {
        const status = (await (await fetch(`${watcher.url}/status`)).json().catch(() => ({}))) as Json;
        if (status.serving) return Date.now();
        await new Promise((r) => setTimeout(r, 25));
      }
      return Number.NaN;
    })().catch(() => Number.NaN);
    await api.stop('SIGKILL');
    await until(
      'offline_ verifications during the outage',
      () => accepted('standby', killAt).length >= 15 && Date.now() - killAt >= 4000,
      30_000,
    );
    const standbyServingMs = (await servingAt) - killAt;
    // An offline_ token solved during the outage and presented only after the recovery.
    const heldOffline = await solveChallenge({ baseUrl: mainUrl, appKey: app.appKey, action: ACTION });
    expect(heldOffline.route).toBe('standby');

    // 3. It comes back on the same database and port.
    const restartAt = Date.now();
    await startApi();
    const readyMs = Date.now() - restartAt;
    await until(
      'pt_ verifications after the restart',
      () => accepted('main', restartAt).length >= 10,
      30_000,
    );
    await s.stop();
    const endAt = Date.now();

    // Figures.
    const minted = s.minted;
    const firstOffline = minted.find(
      (m) => m.answer.accepted && m.route === 'standby' && m.mintedAt >= killAt,
    )!;
    const firstBack = minted.find((m) => m.answer.accepted && m.route === 'main' && m.mintedAt >= restartAt)!;
    const switchOverMs = firstOffline.answeredAt - killAt;
    const switchBackMs = firstBack.answeredAt - restartAt;
    const stranded = minted.filter((m) => m.answer.status === 503);
    const failed = s.verifications.filter((v) => !v.accepted);
    const outageUsers = s.verifications.filter((v) => v.startedAt >= killAt && v.startedAt < restartAt);
    const slowest = Math.max(...outageUsers.map((v) => v.attempts.at(-1)!.answeredAt - v.startedAt), 0);
    const byRoute = (route: string) => minted.filter((m) => m.route === route).length;
    console.log(
      [
        '',
        `failover drill (${TEST_DATABASE}, ${cpus().length} cores ${cpus()[0]?.model ?? ''}, load ${loadavg()[0]!.toFixed(1)})`,
        `  verifications: ${s.verifications.length} end users, ${minted.length} tokens (pt_ ${byRoute('main')}, offline_ ${byRoute('standby')}, co_ ${byRoute('client-only')}) in ${((endAt - t0) / 1000).toFixed(1)} s`,
        `  switch over:   ${switchOverMs} ms   (SIGKILL → first offline_ token accepted by the backend; standby serving after ${standbyServingMs} ms)`,
        `  switch back:   ${switchBackMs} ms   (restart → first pt_ token accepted; main API ready after ${readyMs} ms)`,
        `  slowest end-user verification during the outage: ${slowest} ms`,
        `  pt_ tokens caught in flight by the kill (backend answered 503, the end user tried again): ${stranded.length}`,
        `  failed end-user verifications: ${failed.length}`,
        `  set-up: main API ready after ${setup.apiReadyMs} ms, the four standby processes (started beside it) after ${setup.standbysReadyMs} ms`,
        '',
      ].join('\n'),
    );

    // 4. No end-user verification failed; no client-only token (the standby was up throughout).
    expect(
      failed.map((v) => v.failure),
      'failed verifications',
    ).toEqual([]);
    expect(byRoute('client-only')).toBe(0);
    expect(accepted('main', t0).filter((m) => m.mintedAt < killAt).length).toBeGreaterThanOrEqual(10);

    // 5. Nothing minted during the outage was lost: every offline_ token was accepted by the backend.
    const offline = minted.filter((m) => m.route === 'standby');
    expect(offline.every((m) => m.token.startsWith('offline_') && m.answer.accepted)).toBe(true);
    expect(offline.every((m) => m.answer.verdict?.offline === true)).toBe(true);
    // Only tokens from the main API, in flight when it died, could miss their verdict; they were not
    // lost either: the restarted API accepts each once (same idempotency key: a consumption whose answer
    // died with the process is recognised), then never again.
    expect(stranded.length).toBeLessThanOrEqual(3);
    for (const m of stranded) {
      expect(m.route).toBe('main');
      expect(m.mintedAt).toBeLessThan(restartAt);
      const verdict = await backend.gatehouse.validate(m.token, {
        expectedAction: ACTION,
        idempotencyKey: m.idempotencyKey,
      });
      expect(verdict, m.token).toMatchObject({ valid: true, accepted: true });
    }

    // The held tokens: accepted once after the recovery (offline_: the backup host says service_online,
    // the main API answers from the standby's shared store), never again.
    for (const held of [heldPass, heldOffline]) {
      const first = await backend.gatehouse.validate(held.passToken, { expectedAction: ACTION });
      expect(first, held.passToken).toMatchObject({
        valid: true,
        accepted: true,
        offline: held.route === 'standby',
      });
      expect(await backend.gatehouse.validate(held.passToken)).toMatchObject({
        errorCode: 'token_already_used',
      });
    }
    expect(Number.isFinite(switchOverMs) && Number.isFinite(switchBackMs)).toBe(true);

    // 6. Every token was accepted exactly once: the second validation is token_already_used, through the
    //    SDK (offline_: backup host says service_online, then the main API) and, for offline_, at the main API.
    const tokens = minted.map((m) => m.token);
    expect(new Set(tokens).size).toBe(tokens.length);
    const replays = await inBatches(minted, async (m: Minted) => {
      const again = await backend.gatehouse.validate(m.token, { expectedAction: ACTION });
      let main: string | null = null;
      if (m.route === 'standby') {
        const res = await fetch(`${mainUrl}/v1/validate`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'X-App-Key': app.appKey,
            'X-App-Secret': app.appSecret,
          },
          body: JSON.stringify({ pass_token: m.token }),
        });
        main = ((await res.json()) as Json).error;
      }
      return { token: m.token, sdk: again.errorCode, main };
    });
    expect(replays.filter((r) => r.sdk !== 'token_already_used')).toEqual([]);
    expect(replays.filter((r) => r.main !== null && r.main !== 'token_already_used')).toEqual([]);
    expect(replays.filter((r) => r.main !== null).length).toBe(offline.length);
  }, 180_000);
});

/** Runs `fn` over `items`, ten at a time. */
async function inBatches<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 10) out.push(...(await Promise.all(items.slice(i, i + 10).map(fn))));
  return out;
}
