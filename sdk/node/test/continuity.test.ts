import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../../standby/src/standby.ts';
import { GatehouseChallengeError, solveChallenge } from '../src/headless.ts';
import { Gatehouse, GatehouseConnectionError } from '../src/index.ts';

/**
 * Continuity end to end in one process: a real API, two real standby instances (each with both roles),
 * the headless client (the widget's protocol) and the server SDK, neither told where the standby is.
 * The API stops answering, the clients move to the standby, the API comes back, the clients move back.
 */

async function waitFor(what: string, check: () => boolean, ms = 10_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('continuity: headless client and server SDK against a real API and standby', () => {
  const store = new MemoryConsumptionStore();
  // The outage log and revocations, shared in memory as the store is (Redis in production).
  const trust = new MemoryOfflineTrust();
  let api: TestApi;
  const standbys: RunningStandby[] = [];
  let app: { appKey: string; appSecret: string };
  let strict: { appKey: string; appSecret: string };
  let gh: Gatehouse;
  let solve: (appKey?: string) => ReturnType<typeof solveChallenge>;
  const offlineTokens: string[] = [];

  beforeAll(async () => {
    api = await startTestApi({}, undefined, { offlineStore: store, offlineTrust: trust });
    app = await api.createApp({ name: 'continuity', test_mode: true });
    strict = await api.createApp({ name: 'strict' });
    for (let i = 0; i < 2; i++) {
      const config = loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'sdk-standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        STANDBY_PROBE_INTERVAL_MS: '50',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        STANDBY_RECOVER_AFTER: '2',
      });
      standbys.push(await startStandby(config, { store, trust, logger: pino({ level: 'silent' }) }));
    }
    // What STANDBY_BYPASS_URLS / STANDBY_FALLBACK_URLS would publish (the ports were only known now).
    api.config.standby.bypassUrls = standbys.map((s) => s.urls.bypass!);
    api.config.standby.fallbackUrls = standbys.map((s) => s.urls.fallback!);
    gh = new Gatehouse({ appKey: app.appKey, appSecret: app.appSecret, baseUrl: api.url, maxRetries: 1 });
    solve = (appKey = app.appKey) =>
      solveChallenge({ baseUrl: api.url, appKey, action: 'login', timeoutMs: 2000 });
  });
  afterAll(async () => {
    await Promise.all(standbys.map((s) => s.close()));
    await api?.close();
  });

  it('while the API is up: pt_ tokens from the main route; the standby hosts are learned on the way', async () => {
    const solved = await solve();
    expect(solved).toMatchObject({ route: 'main', host: api.url, clientOnly: false });
    expect(await gh.validate(solved.passToken, { expectedAction: 'login' })).toMatchObject({
      accepted: true,
    });
    for (const s of standbys) expect(s.health.serving).toBe(false);
  });

  it('the API stops answering: the next solve waits out service_online, then gets an offline_ token', async () => {
    await api.pause();
    const started = Date.now();
    const solved = await solve();
    expect(solved).toMatchObject({ route: 'standby', host: standbys[0]!.urls.bypass, tier: 'invisible' });
    expect(solved.passToken).toMatch(/^offline_/);
    expect(solved.mainFailure).toMatch(/^network_error/);
    expect(Date.now() - started).toBeLessThan(5000);
    offlineTokens.push(solved.passToken);
  });

  it('the server SDK validates offline_ through the backup API, once; pt_ gives an error, never a verdict', async () => {
    const [token] = offlineTokens;
    const verdict = await gh.validate(token!, { expectedAction: 'login', clientIp: '127.0.0.1' });
    expect(verdict).toMatchObject({ valid: true, accepted: true, offline: true, clientIpCheck: 'match' });
    expect(await gh.validate(token!)).toMatchObject({ valid: false, errorCode: 'token_already_used' });
    await expect(gh.validate('pt_whatever.x')).rejects.toBeInstanceOf(GatehouseConnectionError);
  });

  it('an ordinary app on the standby gets a slide, which the headless solver refuses', async () => {
    await expect(solve(strict.appKey)).rejects.toBeInstanceOf(GatehouseChallengeError);
  });

  it('the first standby host gone: the second one serves both sides', async () => {
    await standbys[0]!.close();
    const solved = await solve();
    expect(solved).toMatchObject({ route: 'standby', host: standbys[1]!.urls.bypass });
    expect(await gh.validate(solved.passToken, { expectedAction: 'login' })).toMatchObject({
      accepted: true,
    });
    offlineTokens.push((await solve()).passToken);
  });

  it('the API is back: the very next solve is on the main API again; offline_ tokens stay valid once', async () => {
    await api.resume();
    expect(await solve()).toMatchObject({ route: 'main' });
    await waitFor('the standby to step back', () => !standbys[1]!.health.serving);
    // Minted during the outage, validated after it: the backup host says service_online, the main API answers.
    const late = offlineTokens[1]!;
    expect(await gh.validate(late, { expectedAction: 'login' })).toMatchObject({
      valid: true,
      offline: true,
    });
    expect(await gh.validate(late)).toMatchObject({ errorCode: 'token_already_used' });
  });

  it('nothing answers at all: a client-only co_ token, which the SDK never reports valid', async () => {
    await standbys[1]!.close();
    await api.pause();
    const solved = await solve();
    expect(solved).toMatchObject({ route: 'client-only', clientOnly: true, tier: 'client-only' });
    expect(await gh.validate(solved.passToken)).toMatchObject({ valid: false, clientOnly: true });
    await expect(
      solveChallenge({ baseUrl: api.url, appKey: app.appKey, action: 'login', clientOnlyFallback: false }),
    ).rejects.toBeInstanceOf(GatehouseConnectionError);
    await api.resume();
  });
});
