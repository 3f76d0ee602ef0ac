import { seededRandom } from '@gatehouse/core/challenges';
import { expectedAttempts, nativeHasher, type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanDrag, humanKeys } from '../../core/src/challenges/test-trajectories.ts';
import { ALTERNATIVES_PER_IP_PER_HOUR, alternativeSeconds } from '../src/challenges/alternative.ts';
import { openChallenge } from '../src/challenges/sealed-challenge.ts';
import {
  DESKTOP_CHROME as BROWSER,
  databaseAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * From the outside, over real HTTP: the accessible alternative to an image challenge
 * (a longer proof-of-work) and the keyboard path's extra proof-of-work. The prices are lowered for the test
 * (ALTERNATIVE_POW_SECONDS, KEYBOARD_POW_SECONDS); their ratios and the limits are the production ones.
 */
const run = await databaseAvailable();

const SLIDE_ONLY = { invisible_below: 0, image_below: 101, image_kinds: ['slide'] };
const BASE_SECONDS = 0.1;
const hasher = nativeHasher();
const solve = (puzzle: unknown) => solvePuzzle(puzzle as Puzzle, hasher ? { hasher } : {});
const work = (puzzle: Puzzle) => expectedAttempts(puzzle);

describe.runIf(run)('accessible alternative and keyboard proof-of-work', () => {
  let api: TestApi;
  let appKey: string;
  let appId: string;
  let auth: Record<string, string>;
  const saved = { ...process.env };
  beforeAll(async () => {
    process.env.ALTERNATIVE_POW_SECONDS = String(BASE_SECONDS);
    process.env.KEYBOARD_POW_SECONDS = '0.1';
    api = await startTestApi();
    const a = await api.createApp({ name: 'a11y', risk_policy: SLIDE_ONLY });
    appKey = a.appKey;
    appId = a.appId;
    auth = { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret };
  });
  afterAll(async () => {
    process.env = saved;
    await api?.close();
  });

  /** Alternatives this file has taken from 127.0.0.1 this hour: the count the price and the limit follow. */
  let taken = 0;

  async function slide() {
    const res = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login', signals }, BROWSER);
    expect(res.status).toBe(200);
    const data = res.body.data;
    const sealed = openChallenge(api.runtime.keys, appId, data.challenge)!;
    return {
      data,
      x: (sealed.img!.answer as { x: number }).x,
      ids: { app_key: appKey, challenge_id: data.challenge_id, challenge: data.challenge },
    };
  }
  const alternative = async (ids: object) => {
    const res = await api.post('/v1/challenge/alternative', ids);
    expectMatchesOpenApi('/v1/challenge/alternative', 'post', res);
    if (res.status === 200) taken++;
    return res;
  };
  const submit = async (body: object) => {
    const res = await api.post('/v1/challenge/submit', body);
    expectMatchesOpenApi('/v1/challenge/submit', 'post', res);
    return res;
  };

  it('every image challenge offers it; its proof-of-work instead of the picture earns one pass token', async () => {
    const { data, ids } = await slide();
    expect(data.image.alternative).toBe(true);
    const alt = await alternative(ids);
    expect(alt.status).toBe(200);
    expect(alt.body.data).toMatchObject({ seconds: BASE_SECONDS, expires_in: 600 });
    const answer = { alternative: alt.body.data.ticket, pow: await solve(alt.body.data.pow) };
    const passed = await submit({ ...ids, answer });
    expect(passed.status).toBe(200);
    const verdict = await api.post('/v1/validate', { pass_token: passed.body.data.pass_token }, auth);
    expect(verdict.body.data.valid).toBe(true);
    // The integrator sees how the challenge was solved.
    expect(verdict.body.data.risk.reasons).toContain('challenge.alternative');
    // Single use: the same ticket and solution again, and a second alternative for the solved challenge.
    expect((await submit({ ...ids, answer })).body.error).toBe('challenge_not_found');
    expect((await alternative(ids)).body.error).toBe('challenge_not_found');
  });

  it('one per challenge; no free pass: a wrong or missing proof burns the challenge, a forged or foreign ticket opens nothing', async () => {
    const first = await slide();
    const alt = await alternative(first.ids);
    expect(alt.status).toBe(200);
    const again = await alternative(first.ids);
    expect(again.status).toBe(404);
    expect(again.body.message).toMatch(/already has its alternative/);

    // A ticket is bound to its challenge: another challenge does not accept it.
    const second = await slide();
    const solution = await solve(alt.body.data.pow);
    const foreign = await submit({
      ...second.ids,
      answer: { alternative: alt.body.data.ticket, pow: solution },
    });
    expect(foreign.status).toBe(404);
    const forged = await submit({
      ...first.ids,
      answer: { alternative: `${alt.body.data.ticket.slice(0, -4)}AAAA`, pow: solution },
    });
    expect(forged.status).toBe(404);
    // No proof: refused, and the challenge is burned (even the right solution is refused afterwards).
    const lazy = await submit({ ...first.ids, answer: { alternative: alt.body.data.ticket } });
    expect(lazy.status).toBe(422);
    expect(lazy.body.message).toMatch(/no attempts left/);
    const late = await submit({ ...first.ids, answer: { alternative: alt.body.data.ticket, pow: solution } });
    expect(late.body.error).toBe('challenge_expired');
    // And the picture of a challenge whose alternative was burned cannot be answered either.
    const drag = await submit({
      ...first.ids,
      answer: { x: first.x, input: 'pointer', trajectory: humanDrag(seededRandom(5), first.x) },
    });
    expect(drag.body.error).toBe('challenge_expired');
  });

  it('priced up per address: the price doubles after two in an hour, and the hour allows only a few', async () => {
    const prices: number[] = [];
    while (taken < ALTERNATIVES_PER_IP_PER_HOUR) {
      const { ids } = await slide();
      const alt = await alternative(ids);
      expect(alt.status).toBe(200);
      expect(alt.body.data.seconds).toBeCloseTo(alternativeSeconds('image', taken, BASE_SECONDS));
      prices.push(work(alt.body.data.pow));
    }
    // The last of the hour costs several times the work of the first (expected hashes, not seconds).
    expect(prices.at(-1)!).toBeGreaterThanOrEqual(4 * prices[0]!);
    const { ids } = await slide();
    const refused = await alternative(ids);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Refused, the picture of that challenge is still there to answer.
    const { x } = await slide();
    expect(x).toBeGreaterThan(0);
  });

  it('an invisible challenge has no picture and so no alternative; a bad body is a 400', async () => {
    const invisible = await api.createApp({ name: 'inv', test_mode: true });
    const init = await api.post(
      '/v1/challenge/init',
      { app_key: invisible.appKey, action: 'login', signals },
      BROWSER,
    );
    const refused = await alternative({
      app_key: invisible.appKey,
      challenge_id: init.body.data.challenge_id,
      challenge: init.body.data.challenge,
    });
    expect(refused.status).toBe(400);
    expect((await alternative({ app_key: appKey })).status).toBe(400);
    expect((await alternative({ app_key: appKey, challenge_id: 'ch_x', challenge: 'AAAA' })).status).toBe(
      404,
    );
  });

  describe('keyboard path', () => {
    it('a slide answered with the keyboard needs the keyboard proof-of-work; with it, it passes and says so', async () => {
      const { data, x, ids } = await slide();
      expect(data.image.keyboard_pow).toBeTruthy();
      const keys = humanKeys(seededRandom(11), x);
      const final = keys.at(-1)!.x;
      const without = await submit({ ...ids, answer: { x: final, input: 'keyboard', trajectory: keys } });
      expect(without.status).toBe(422);
      // Burned: a right keyboard answer with its proof is refused after a missing one.
      const pow = await solve(data.image.keyboard_pow);
      const after = await submit({ ...ids, answer: { x: final, input: 'keyboard', trajectory: keys, pow } });
      expect(after.body.error).toBe('challenge_expired');

      const fresh = await slide();
      const keys2 = humanKeys(seededRandom(12), fresh.x);
      const passed = await submit({
        ...fresh.ids,
        answer: {
          x: keys2.at(-1)!.x,
          input: 'keyboard',
          trajectory: keys2,
          pow: await solve(fresh.data.image.keyboard_pow),
        },
      });
      expect(passed.status).toBe(200);
      const verdict = await api.post('/v1/validate', { pass_token: passed.body.data.pass_token }, auth);
      expect(verdict.body.data.risk.reasons).toContain('challenge.keyboard');
    });

    it('a pointer drag needs no keyboard proof', async () => {
      const { x, ids } = await slide();
      const res = await submit({
        ...ids,
        answer: { x, input: 'pointer', trajectory: humanDrag(seededRandom(21), x) },
      });
      expect(res.status).toBe(200);
    });
  });
});
