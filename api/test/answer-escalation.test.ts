import { seededRandom } from '@gatehouse/core/challenges';
import { nativeHasher, type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanDrag, humanKeys } from '../../core/src/challenges/test-trajectories.ts';
import { openChallenge } from '../src/challenges/sealed-challenge.ts';
import { RedisAnswerHistory } from '../src/risk/answer-history.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  REDIS_URL,
  redisAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * Escalation and the keyboard path from the outside, over real HTTP: wrong image answers cost the address they came
 * from (the next init scores higher, then takes the hard tier, then is refused for minutes), with the
 * reasons visible to the integrator; a keyboard completion raises the next score a little; the click
 * crosshair's keyboard answer carries the same priced proof-of-work as the slide's. Addresses come from
 * X-Forwarded-For behind TRUSTED_PROXIES=loopback, as behind an ingress, so each test has its own.
 */
const run = await databaseAvailable();
const withRedis = run && (await redisAvailable('the shared answer history test'));

/** Always a picture; the hard tier from score 50 (a desktop Chrome scores 10, so +40 of failures reaches it). */
const POLICY = { invisible_below: 0, image_below: 50, image_kinds: ['slide'] };
const hasher = nativeHasher();
const solve = (puzzle: unknown) => solvePuzzle(puzzle as Puzzle, hasher ? { hasher } : {});

describe.runIf(run)('escalation after wrong answers, and the keyboard risk move', () => {
  let api: TestApi;
  const saved = { ...process.env };
  beforeAll(async () => {
    process.env.KEYBOARD_POW_SECONDS = '0.05';
    api = await startTestApi({ TRUSTED_PROXIES: 'loopback' });
  });
  afterAll(async () => {
    process.env = saved;
    await api?.close();
  });

  async function app(policy: Record<string, unknown> = POLICY) {
    const a = await api.createApp({ name: 'escalation', risk_policy: policy });
    return { ...a, auth: { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret } };
  }
  async function init(target: TestApi, appKey: string, ip: string) {
    const res = await target.post(
      '/v1/challenge/init',
      { app_key: appKey, action: 'login', signals },
      { ...CHROME, 'X-Forwarded-For': ip },
    );
    expectMatchesOpenApi('/v1/challenge/init', 'post', res);
    return res;
  }
  const submit = (target: TestApi, body: object) => target.post('/v1/challenge/submit', body);
  const ids = (appKey: string, data: { challenge_id: string; challenge: string }) => ({
    app_key: appKey,
    challenge_id: data.challenge_id,
    challenge: data.challenge,
  });
  const answerOf = (target: TestApi, appId: string, sealed: string) =>
    openChallenge(target.runtime.keys, appId, sealed)!.img!.answer as { x: number };

  /** Every drag its own seed: the app refuses a drag that repeats one it saw (a replay). */
  let drags = 0;
  /** One init from `ip` and a human-looking drag 40 px off the gap: a wrong answer. Returns the init's answer. */
  async function miss(target: TestApi, a: { appKey: string; appId: string }, ip: string) {
    const started = await init(target, a.appKey, ip);
    expect(started.status).toBe(200);
    const { x } = answerOf(target, a.appId, started.body.data.challenge);
    const off = x > 150 ? x - 40 : x + 40;
    const res = await submit(target, {
      ...ids(a.appKey, started.body.data),
      answer: { x: off, input: 'pointer', trajectory: humanDrag(seededRandom(`drag-${++drags}`), off) },
    });
    expect(res.status).toBe(422);
    return started;
  }
  /** One init from `ip` solved by a human-looking drag; returns the pass token's risk reasons and the init's tier. */
  async function pass(a: { appKey: string; appId: string; auth: Record<string, string> }, ip: string) {
    const started = await init(api, a.appKey, ip);
    expect(started.status).toBe(200);
    const data = started.body.data;
    const { x } = answerOf(api, a.appId, data.challenge);
    const res = await submit(api, {
      ...ids(a.appKey, data),
      ...(data.pow ? { pow: await solve(data.pow) } : {}),
      answer: { x, input: 'pointer', trajectory: humanDrag(seededRandom(`drag-${++drags}`), x) },
    });
    expect(res.status).toBe(200);
    const verdict = await api.post('/v1/validate', { pass_token: res.body.data.pass_token }, a.auth);
    return { tier: data.tier as string, reasons: verdict.body.data.risk.reasons as string[] };
  }

  it('consecutive wrong answers from one address: more points, then the hard tier, then refused for minutes', async () => {
    const a = await app();
    const ip = '198.51.100.41';
    const tiers: string[] = [];
    for (let i = 0; i < 8; i++) tiers.push((await miss(api, a, ip)).body.data.tier);
    // Two misses are free (people miss); from the fifth init on, +40 moves the request into the hard tier.
    expect(tiers).toEqual(['image', 'image', 'image', 'image', 'image', 'hard', 'hard', 'hard']);
    const refused = await init(api, a.appKey, ip);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: -1, error: 'request_rejected' });
    expect(refused.body.message).toMatch(/wrong answers/);
    // Bounded: the count decays under the threshold within halfLife x log2(cap / 7.5), about 4 minutes.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(260);
    // The integrator's console keeps the refusal with its reasons.
    const decision = api.runtime.decisions
      .recent(50, a.appKey)
      .find((d) => d.ip === ip && d.tier === 'reject');
    expect(decision?.reasons).toEqual(expect.arrayContaining(['answers.failed:+40', 'answers.refused']));
  });

  it('an IPv6 client rotating addresses inside its own /64 is one address: the misses still add up to a refusal', async () => {
    const a = await app();
    // One subscriber's prefix (ISPs delegate a /64 or shorter to each home): a new interface id every try.
    const tiers: string[] = [];
    for (let i = 0; i < 8; i++)
      tiers.push((await miss(api, a, `2001:db8:7:1::${(i + 1).toString(16)}`)).body.data.tier);
    expect(tiers).toEqual(['image', 'image', 'image', 'image', 'image', 'hard', 'hard', 'hard']);
    const refused = await init(api, a.appKey, '2001:db8:7:1:dead:beef:0:9');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('request_rejected');
    // The next /64 (another subscriber, or another network of the same one) is untouched.
    expect((await pass(a, '2001:db8:7:2::1')).reasons).toEqual([]);
  });

  it('the accessible alternative is limited per client too: an IPv6 client rotating inside its /64 gets six an hour', async () => {
    const a = await app();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const ip = `2001:db8:8:1::${(i + 1).toString(16)}`;
      const started = await init(api, a.appKey, ip);
      const alt = await api.post('/v1/challenge/alternative', ids(a.appKey, started.body.data), {
        'X-Forwarded-For': ip,
      });
      statuses.push(alt.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  it('the reasons reach the integrator, a pass ends the run of failures, and other addresses are untouched', async () => {
    const a = await app();
    const ip = '198.51.100.42';
    expect((await pass(a, ip)).reasons).toEqual([]);
    for (let i = 0; i < 3; i++) await miss(api, a, ip);
    // After three misses: 10 points per miss from the second, reported as the other rules are.
    const after = await pass(a, ip);
    expect(after.reasons).toEqual(['answers.failed:+20']);
    // That pass ended the run: the next init from the address scores as before.
    expect((await pass(a, ip)).reasons).toEqual([]);
    // A neighbour on the same network (another address) never paid for them.
    for (let i = 0; i < 3; i++) await miss(api, a, ip);
    expect((await pass(a, '198.51.100.43')).reasons).toEqual([]);
    // Nor does the same address on another app.
    expect((await pass(await app(), ip)).reasons).toEqual([]);
  });

  it('a keyboard completion raises the next score from the address; a drag does not', async () => {
    const a = await app({ invisible_below: 0, image_below: 101, image_kinds: ['slide'] });
    const ip = '198.51.100.44';
    expect((await pass(a, ip)).reasons).toEqual([]);
    expect((await pass(a, ip)).reasons).toEqual([]);
    for (let i = 0; i < 2; i++) {
      const started = await init(api, a.appKey, ip);
      const data = started.body.data;
      const { x } = answerOf(api, a.appId, data.challenge);
      const keys = humanKeys(seededRandom(30 + i), x);
      const res = await submit(api, {
        ...ids(a.appKey, data),
        answer: {
          x: keys.at(-1)!.x,
          input: 'keyboard',
          trajectory: keys,
          pow: await solve(data.image.keyboard_pow),
        },
      });
      expect(res.status).toBe(200);
    }
    // Two keyboard passes: +20, the cap (a person at the base score 10 stays under the invisible threshold, 35).
    const next = await pass(a, ip);
    expect(next.reasons).toEqual(['answers.keyboard:+20']);
  });

  it("click: the crosshair's keyboard answer carries the keyboard proof-of-work, like the slide's", async () => {
    const a = await app({ invisible_below: 0, image_below: 101, image_kinds: ['click'] });
    const started = async () => {
      const res = await init(api, a.appKey, '198.51.100.45');
      expect(res.body.data.image.kind).toBe('click');
      expect(res.body.data.image.keyboard_pow).toBeTruthy();
      const targets = (
        openChallenge(api.runtime.keys, a.appId, res.body.data.challenge)!.img!.answer as {
          targets: Array<{ x: number; y: number }>;
        }
      ).targets;
      const picks = targets.map((t, i) => ({ x: t.x, y: t.y, t: 900 + 700 * i }));
      return { data: res.body.data, picks };
    };
    const first = await started();
    const without = await submit(api, {
      ...ids(a.appKey, first.data),
      answer: { input: 'keyboard', picks: first.picks },
    });
    expect(without.status).toBe(422);
    const second = await started();
    const res = await submit(api, {
      ...ids(a.appKey, second.data),
      answer: { input: 'keyboard', picks: second.picks, pow: await solve(second.data.image.keyboard_pow) },
    });
    expect(res.status).toBe(200);
    const verdict = await api.post('/v1/validate', { pass_token: res.body.data.pass_token }, a.auth);
    expect(verdict.body.data.risk.reasons).toContain('challenge.keyboard');
    // The pointer form (a list of clicks) needs no proof.
    const third = await started();
    expect((await submit(api, { ...ids(a.appKey, third.data), answer: third.picks })).status).toBe(200);
  });

  describe.runIf(withRedis)('on Redis', () => {
    let shared: TestApi;
    let reader: Redis;
    beforeAll(async () => {
      shared = await startTestApi({ TRUSTED_PROXIES: 'loopback', REDIS_URL });
      reader = new Redis(REDIS_URL);
    });
    afterAll(async () => {
      reader?.disconnect();
      await shared?.close();
    });

    it('the count lives in Redis, where every instance reads it, and escalates the next init', async () => {
      const a = await shared.createApp({ name: 'shared', risk_policy: POLICY });
      const ip = '198.51.100.46';
      for (let i = 0; i < 3; i++) await miss(shared, a, ip);
      // Another connection (as another instance would) reads the three misses.
      const counts = await new RedisAnswerHistory(reader).read(`${a.appId}:${ip}`);
      expect(Math.round(counts.failures)).toBe(3);
      expect(await reader.pttl(`gatehouse:ans:${a.appId}:${ip}`)).toBeGreaterThan(0);
      const next = await init(shared, a.appKey, ip);
      expect(next.body.data.tier).toBe('image');
      await miss(shared, a, ip);
      await miss(shared, a, ip);
      expect((await init(shared, a.appKey, ip)).body.data.tier).toBe('hard');
    });
  });
});
