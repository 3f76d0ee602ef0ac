import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, REDIS_URL, redisAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { RedisOutageBoard } from '../src/outage-board.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/**
 * Standby processes probe the main API each on its own clock. A bypass host that has seen an outage
 * mints offline_ tokens; a fallback host whose probes have not caught up yet must still validate them,
 * or the integrator's backend is refused for those few hundred milliseconds (a failover drill under load
 * found exactly that). The outage board in the shared Redis makes them agree.
 */
const run = await redisAvailable('the outage board tests (the standby shared store)');

describe.runIf(run)('outage board in Redis', () => {
  const clients: Redis[] = [];
  const client = () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(c);
    return c;
  };
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  it('a declaration by one process is seen by another on the same main API only; withdrawn or lapsed, it is gone', async () => {
    const prefix = `gatehouse:test:outage:${randomBytes(6).toString('hex')}:`;
    const main = 'http://main.example:8080';
    const declarer = new RedisOutageBoard(client(), main, prefix);
    const peer = new RedisOutageBoard(client(), main, prefix);
    const otherRegion = new RedisOutageBoard(client(), 'http://other.example:8080', prefix);
    expect(await peer.declared()).toBe(false);
    await declarer.declare('a', 60_000);
    await declarer.declare('b', 300);
    expect(await peer.declared()).toBe(true);
    expect(await otherRegion.declared()).toBe(false);
    await declarer.withdraw('a');
    expect(await peer.declared()).toBe(true); // b's still stands
    await new Promise((r) => setTimeout(r, 450));
    expect(await peer.declared()).toBe(false);
  });
});

describe.runIf(run)(
  'a fallback host validates what its bypass peer minted before its own probes agree',
  () => {
    let api: TestApi;
    const standbys: RunningStandby[] = [];
    let app: { appKey: string; appSecret: string };

    // Each standby probes once at start (the main API is up) and then only when a test says so.
    async function standby(role: 'bypass' | 'fallback') {
      const config = loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_ROLE: role,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_STORE_URL: REDIS_URL,
        STANDBY_PROBE_INTERVAL_MS: '60000',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        STANDBY_FAIL_AFTER: '3',
        STANDBY_RECOVER_AFTER: '2',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), `standby-${role}-`)),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      });
      const s = await startStandby(config, { logger: pino({ level: 'silent' }) });
      standbys.push(s);
      return s;
    }

    beforeAll(async () => {
      api = await startTestApi();
      app = await api.createApp({ name: 'board', test_mode: true });
    });
    afterAll(async () => {
      await Promise.all(standbys.map((s) => s.close()));
      await api?.close();
    });

    it('service_online from both before any outage; after the bypass sees one, the fallback validates its token once', async () => {
      const bypass = await standby('bypass');
      const fallback = await standby('fallback');
      const auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
      const init = () =>
        postJson(`${bypass.urls.bypass}/v1/challenge/init`, { app_key: app.appKey, action: 'login' });
      expect((await init()).body.error).toBe('service_online');
      expect(
        (await postJson(`${fallback.urls.fallback}/api/validate`, { pass_token: 'offline_x.y' }, auth)).body
          .error,
      ).toBe('service_online');

      // The bypass's probes see the outage; the fallback's have not probed since (its own view: up).
      for (let i = 0; i < 3; i++) bypass.health.record(false);
      const started = await init();
      expect(started.status).toBe(200);
      const submit = await postJson(`${bypass.urls.bypass}/v1/challenge/submit`, {
        app_key: app.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
        pow: await solvePuzzle(started.body.data.pow as Puzzle),
      });
      const token = submit.body.data.pass_token as string;
      expect(token).toMatch(/^offline_/);

      expect(fallback.health.status()).toMatchObject({ main: 'up', serving: false });
      const verdict = await postJson(`${fallback.urls.fallback}/api/validate`, { pass_token: token }, auth);
      expect(verdict.status).toBe(200);
      expect(verdict.body.data, JSON.stringify(verdict.body)).toMatchObject({ valid: true, offline: true });
      const again = await postJson(`${fallback.urls.fallback}/api/validate`, { pass_token: token }, auth);
      expect(again.body.error).toBe('token_already_used');

      // The operator's `online` is final: no peer's declaration overrides it, so anything but a token
      // minted during the recorded outage gets service_online; that token keeps its verdict (DESIGN.md).
      fallback.health.setMode('online');
      expect(
        (await postJson(`${fallback.urls.fallback}/api/validate`, { pass_token: 'offline_x.y' }, auth)).body
          .error,
      ).toBe('service_online');
      expect(
        (await postJson(`${fallback.urls.fallback}/api/validate`, { pass_token: token }, auth)).body.error,
      ).toBe('token_already_used');
    });
  },
);
