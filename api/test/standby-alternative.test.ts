import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALTERNATIVES_PER_IP_PER_HOUR, alternativeSeconds } from '@gatehouse/core/alternative';
import { RedisConsumptionStore } from '@gatehouse/core/offline-consumption';
import { nativeHasher, type Puzzle, solvePuzzle, verifySolution } from '@gatehouse/core/pow';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import {
  databaseAvailable,
  type Json,
  postJson,
  REDIS_URL,
  redisAvailable,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * During an outage, over real HTTP: the accessible alternative on a standby's `bypass.`
 * hosts. Two standby processes share one Redis store (as both `bypass.` hosts do in production), so the
 * per-address limit is one count across them. The price is lowered (ALTERNATIVE_POW_SECONDS); its ratios,
 * the tier and the limits are the production ones.
 */
const run = (await databaseAvailable()) && (await redisAvailable('the standby alternative suite'));

const BASE_SECONDS = 0.05;
const hasher = nativeHasher();
const solve = (puzzle: unknown) => solvePuzzle(puzzle as Puzzle, hasher ? { hasher } : {});

describe.runIf(run)('the accessible alternative on a standby during an outage', () => {
  let api: TestApi;
  const standbys: RunningStandby[] = [];
  const redis: Redis[] = [];
  let app: { appKey: string; appSecret: string; appId: string };
  /** Alternatives this file took from 127.0.0.1 this hour, in this run's own store prefix. */
  let taken = 0;

  beforeAll(async () => {
    api = await startTestApi();
    app = await api.createApp({ name: 'standby-alternative' });
    // This run's own keys in the shared Redis: other runs this hour do not count against it.
    const prefix = `gatehouse:test-alt-${randomBytes(5).toString('hex')}:`;
    for (let i = 0; i < 2; i++) {
      const client = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
      redis.push(client);
      const standby = await startStandby(
        loadStandbyConfig({
          MAIN_API_URL: api.url,
          STANDBY_ROLE: 'bypass',
          STANDBY_BYPASS_PORT: '0',
          STANDBY_PROBE_INTERVAL_MS: '60000',
          STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-alt-')),
          STANDBY_SYNC_TOKEN: api.runtime.syncToken,
          ALTERNATIVE_POW_SECONDS: String(BASE_SECONDS),
        }),
        { store: new RedisConsumptionStore(client, prefix), logger: pino({ level: 'silent' }) },
      );
      standbys.push(standby);
      // The outage: the operator's `serve` (the main API stays up for the snapshot and the validation).
      standby.health.setMode('serve');
    }
  });
  afterAll(async () => {
    for (const s of standbys) await s.close();
    for (const r of redis) r.disconnect();
    await api?.close();
  });
  afterEach(() => vi.useRealTimers());

  const host = (i = 0) => standbys[i]!.urls.bypass!;

  async function init(i = 0) {
    const res = await postJson(`${host(i)}/v1/challenge/init`, { app_key: app.appKey, action: 'login' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data as Json;
    return { data, ids: { app_key: app.appKey, challenge_id: data.challenge_id, challenge: data.challenge } };
  }

  async function alternative(ids: object, i = 0) {
    const res = await postJson(`${host(i)}/v1/challenge/alternative`, ids);
    if (res.status === 200) taken++;
    return res;
  }

  /** A second solve of one challenge: refused (its one attempt is spent, or it is solved), no token. */
  function expectRefused(res: { status: number; body: Json }) {
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(['challenge_not_found', 'challenge_expired']).toContain(res.body.error);
    expect(res.body.data?.pass_token).toBeUndefined();
  }

  const submit = (ids: object, pow: unknown, answer: unknown, i = 0) =>
    postJson(`${host(i)}/v1/challenge/submit`, { ...ids, pow, answer });

  it('init offers it; its ticket and proof, with the challenge’s own proof, earn an offline_ token; one ticket per challenge (across both hosts), one solve', async () => {
    const { data, ids } = await init();
    expect(data.tier).toBe('hard');
    expect(data.image).toMatchObject({ alternative: true });
    // The main API's default kinds (standby/test/offline-kinds.test.ts): the slide is opt-in there too.
    expect(['click', 'select']).toContain(data.image.kind);
    const alt = await alternative(ids);
    expect(alt.status, JSON.stringify(alt.body)).toBe(200);
    expect(alt.body.data).toMatchObject({ expires_in: 600 });
    // Every standby challenge is of the hard tier: twice the base.
    expect(alt.body.data.seconds).toBeCloseTo(alternativeSeconds('hard', taken, BASE_SECONDS));
    expect(typeof alt.body.data.ticket).toBe('string');

    // One per challenge, whichever bypass host is asked.
    const again = await alternative(ids, 1);
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('challenge_not_found');

    const [pow, altPow] = await Promise.all([solve(data.pow), solve(alt.body.data.pow)]);
    const ok = await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow }, 1);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.pass_token).toMatch(/^offline_/);
    expectRefused(await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow }));

    // The challenge's own proof is still due with the alternative.
    const other = await init();
    const otherAlt = await alternative(other.ids);
    const without = await submit(other.ids, undefined, {
      alternative: otherAlt.body.data.ticket,
      pow: await solve(otherAlt.body.data.pow),
    });
    expect(without.body.error).toBe('invalid_answer');
  }, 60_000);

  it('a forged ticket, or another challenge’s, opens nothing; a wrong proof is a wrong answer', async () => {
    const a = await init();
    const b = await init();
    const altA = await alternative(a.ids);
    expect(altA.status).toBe(200);
    const pow = await solve(b.data.pow);
    const foreign = await submit(b.ids, pow, { alternative: altA.body.data.ticket, pow: { nonces: [0] } });
    expect(foreign.body.error).toBe('challenge_not_found');
    const forged = await submit(b.ids, pow, {
      alternative: `${altA.body.data.ticket}x`,
      pow: { nonces: [0] },
    });
    expect(forged.body.error).toBe('challenge_not_found');
    const powA = await solve(a.data.pow);
    const wrong = await submit(a.ids, powA, { alternative: altA.body.data.ticket, pow: { nonces: [1, 2] } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toBe('invalid_answer');
    // Nor is a test-mode challenge's (no picture) or a bad body an alternative's.
    const bad = await postJson(`${host()}/v1/challenge/alternative`, { app_key: app.appKey });
    expect(bad.status).toBe(400);
  }, 60_000);

  it('a ticket proof of the right shape but unsolved is caught by the one spot check, which burns the challenge', async () => {
    const { data, ids } = await init();
    const alt = await alternative(ids);
    expect(alt.status).toBe(200);
    // Right count, ascending, solved by nobody: every sub-puzzle the pick can land on misses. At this
    // suite's low price a nonce picked blindly meets the target often enough to flake, so each junk nonce
    // is one checked to miss.
    const junk = async (puzzle: Json) => {
      const nonces: number[] = [];
      for (let n = 0; nonces.length < (puzzle.count as number); n++) {
        const single = { ...(puzzle as Puzzle), count: 1 };
        if (!(await verifySolution(single, { nonces: [n] }, hasher ? { hasher } : {}))) nonces.push(n);
      }
      return { nonces };
    };
    const refused = await submit(ids, await junk(data.pow), {
      alternative: alt.body.data.ticket,
      pow: await junk(alt.body.data.pow),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe('invalid_answer');
    expect(refused.body.message).toContain('0 attempts left');
    // The draw is spent: the real solutions no longer earn a token.
    const [pow, altPow] = await Promise.all([solve(data.pow), solve(alt.body.data.pow)]);
    const after = await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow });
    expect(after.status).toBeGreaterThanOrEqual(400);
    expect(after.body.data?.pass_token).toBeUndefined();
  }, 60_000);

  it('a ticket outlives its challenge: redeemed after the challenge’s 120 s, within its own lifetime, and only once', async () => {
    const { data, ids } = await init();
    const alt = await alternative(ids);
    expect(alt.status).toBe(200);
    const [pow, altPow] = await Promise.all([solve(data.pow), solve(alt.body.data.pow)]);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 300_000 });
    const late = await submit(ids, pow, { slide: 1 });
    expect(late.body.error).toBe('challenge_expired');
    const ok = await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expectRefused(await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow }, 1));
    vi.setSystemTime(Date.now() + 400_000);
    const expired = await submit(ids, pow, { alternative: alt.body.data.ticket, pow: altPow });
    expect(expired.body.error).toBe('challenge_expired');
  }, 60_000);

  it('priced up after two and limited per address and hour across both bypass hosts: the 7th is 429 with Retry-After', async () => {
    while (taken < ALTERNATIVES_PER_IP_PER_HOUR) {
      const { ids } = await init(taken % 2);
      const alt = await alternative(ids, taken % 2);
      expect(alt.status, JSON.stringify(alt.body)).toBe(200);
      expect(alt.body.data.seconds).toBeCloseTo(alternativeSeconds('hard', taken, BASE_SECONDS));
    }
    expect(alternativeSeconds('hard', taken, BASE_SECONDS)).toBeCloseTo(BASE_SECONDS * 2 * 16);
    const { ids } = await init(1);
    const over = await postJson(`${host(1)}/v1/challenge/alternative`, ids);
    expect(over.status).toBe(429);
    expect(over.body.error).toBe('rate_limited');
    const retryAfter = Number(over.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  }, 90_000);

  it('a bad ALTERNATIVE_POW_SECONDS stops the standby at start with a sentence naming it', () => {
    expect(() => loadStandbyConfig({ ALTERNATIVE_POW_SECONDS: 'soon' })).toThrow(/ALTERNATIVE_POW_SECONDS/);
    expect(() => loadStandbyConfig({ ALTERNATIVE_POW_SECONDS: '0' })).toThrow(/ALTERNATIVE_POW_SECONDS/);
    expect(loadStandbyConfig({}).alternativeSeconds).toBe(20);
  });

  it('while the main API is up, the standby answers service_online (its alternative too)', async () => {
    const { ids } = await init();
    standbys[0]!.health.setMode('online');
    try {
      const res = await postJson(`${host()}/v1/challenge/alternative`, ids);
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('service_online');
    } finally {
      standbys[0]!.health.setMode('serve');
    }
  });
});
