import { nativeHasher, type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChallenge } from '../src/challenges/sealed-challenge.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * The keyboard path for the select grid, over real HTTP: a select answered with the keyboard
 * (`{input: "keyboard", picks, pow}`) carries the same priced keyboard proof-of-work as a slide or a click
 * crosshair; without it the challenge is refused and spent, with it the pass says `challenge.keyboard` and the
 * next init from the address scores `answers.keyboard`. The price is lowered for the test (KEYBOARD_POW_SECONDS);
 * its production value is checked in accessible-alternative.test.ts. Addresses come from X-Forwarded-For
 * behind TRUSTED_PROXIES=loopback, so each test has its own.
 */
const run = await databaseAvailable();
const hasher = nativeHasher();
const solve = (puzzle: unknown) => solvePuzzle(puzzle as Puzzle, hasher ? { hasher } : {});
const SELECT = { invisible_below: 0, image_below: 101, image_kinds: ['select'] };

describe.runIf(run)('select answered with the keyboard: the keyboard proof-of-work', () => {
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

  async function app() {
    const a = await api.createApp({ name: 'select-keyboard', risk_policy: SELECT });
    return { ...a, auth: { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret } };
  }
  /** One select challenge for `ip`, and its right tiles (opened from the sealed challenge: test-only knowledge). */
  async function started(a: { appKey: string; appId: string }, ip: string) {
    const res = await api.post(
      '/v1/challenge/init',
      { app_key: a.appKey, action: 'login', signals },
      { ...CHROME, 'X-Forwarded-For': ip },
    );
    expect(res.status).toBe(200);
    expectMatchesOpenApi('/v1/challenge/init', 'post', res);
    const data = res.body.data;
    expect(data.image.kind).toBe('select');
    const { indices } = openChallenge(api.runtime.keys, a.appId, data.challenge)!.img!.answer as {
      indices: number[];
    };
    return { data, indices };
  }
  const submit = (appKey: string, data: { challenge_id: string; challenge: string }, answer: unknown) =>
    api.post('/v1/challenge/submit', {
      app_key: appKey,
      challenge_id: data.challenge_id,
      challenge: data.challenge,
      answer,
    });
  const reasonsOf = async (token: string, auth: Record<string, string>) =>
    (await api.post('/v1/validate', { pass_token: token }, auth)).body.data.risk.reasons as string[];

  it('the select challenge offers the keyboard puzzle; a keyboard answer without its solution is refused and spends the challenge', async () => {
    const a = await app();
    const { data, indices } = await started(a, '198.51.100.61');
    expect(data.image.keyboard_pow).toMatchObject({ count: expect.any(Number) });
    const without = await submit(a.appKey, data, { input: 'keyboard', picks: indices });
    expect(without.status).toBe(422);
    expect(without.body).toMatchObject({ code: -1, error: 'invalid_answer' });
    expectMatchesOpenApi('/v1/challenge/submit', 'post', without);
    // Spent: the right tiles with the right proof do not revive it.
    const late = await submit(a.appKey, data, {
      input: 'keyboard',
      picks: indices,
      pow: await solve(data.image.keyboard_pow),
    });
    expect(late.status).not.toBe(200);
  });

  it('the wrong tiles with a right proof are refused', async () => {
    const a = await app();
    const { data, indices } = await started(a, '198.51.100.62');
    const others = [0, 1, 2, 3, 4, 5, 6, 7, 8].filter((i) => !indices.includes(i));
    const res = await submit(a.appKey, data, {
      input: 'keyboard',
      picks: others,
      pow: await solve(data.image.keyboard_pow),
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_answer');
  });

  it('with its solution it passes, the pass says challenge.keyboard, and the next init from the address scores it', async () => {
    const a = await app();
    const ip = '198.51.100.63';
    const { data, indices } = await started(a, ip);
    const res = await submit(a.appKey, data, {
      input: 'keyboard',
      picks: [...indices].reverse(),
      pow: await solve(data.image.keyboard_pow),
    });
    expect(res.status).toBe(200);
    expectMatchesOpenApi('/v1/challenge/submit', 'post', res);
    expect(await reasonsOf(res.body.data.pass_token, a.auth)).toContain('challenge.keyboard');
    // A keyboard pass moves the next score from this address, as a keyboard slide or click does.
    const next = await started(a, ip);
    const pointer = await submit(a.appKey, next.data, next.indices);
    expect(pointer.status).toBe(200);
    expect(await reasonsOf(pointer.body.data.pass_token, a.auth)).toEqual(['answers.keyboard:+10']);
  });

  it('the pointer form (a bare list of tiles) needs no keyboard proof and says nothing of the keyboard', async () => {
    const a = await app();
    const { data, indices } = await started(a, '198.51.100.64');
    const res = await submit(a.appKey, data, indices);
    expect(res.status).toBe(200);
    expect(await reasonsOf(res.body.data.pass_token, a.auth)).not.toContain('challenge.keyboard');
  });
});
