import { seededRandom } from '@gatehouse/core/challenges';
import {
  createPuzzle,
  nativeHasher,
  type Puzzle,
  parsePuzzle,
  solvePuzzle,
  targetForAttempts,
} from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { humanDrag, linearDrag } from '../../core/src/challenges/test-trajectories.ts';
import { meetsTarget as meetsTargetOf, nonceBytes as nonceBytesOf } from '../../core/src/pow/encoding.ts';
import type { AppSettingsInput } from '../src/apps/settings.ts';
import { imagePool } from '../src/challenges/kinds.ts';
import { openChallenge, sealChallenge } from '../src/challenges/sealed-challenge.ts';
import {
  DESKTOP_CHROME as BROWSER,
  DESKTOP_SIGNALS as browserSignals,
  databaseAvailable,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

const run = await databaseAvailable();

const INVISIBLE_ONLY = { invisible_below: 101, image_below: 101 };
const SLIDE_ONLY = { invisible_below: 0, image_below: 101, image_kinds: ['slide'] };

describe.runIf(run)('challenge flow: init, submit, validate', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function app(settings: Partial<AppSettingsInput> = {}) {
    const created = await api.createApp({ name: 'flow', ...settings });
    return { ...created, auth: { 'X-App-Key': created.appKey, 'X-App-Secret': created.appSecret } };
  }
  // Every answer of the flow is checked against the OpenAPI document as it goes.
  const init = async (body: object, headers: Record<string, string> = BROWSER) => {
    const res = await api.post('/v1/challenge/init', body, headers);
    expectMatchesOpenApi('/v1/challenge/init', 'post', res);
    return res;
  };
  const submit = async (body: object) => {
    const res = await api.post('/v1/challenge/submit', body);
    expectMatchesOpenApi('/v1/challenge/submit', 'post', res);
    return res;
  };
  const sealedOf = async (appId: string, challenge: string) =>
    openChallenge(api.runtime.keys, appId, challenge)!;

  it('test mode: invisible tier, trivial proof-of-work, a pass token that validates once with captcha_args', async () => {
    const a = await app({ test_mode: true });
    const started = await init({
      app_key: a.appKey,
      action: 'login',
      signals: browserSignals,
      referer: 'https://shop.test/login',
    });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ mode: 'challenge', tier: 'invisible', expires_in: 120 });
    expect(started.body.data.challenge_id).toMatch(/^ch_/);
    expect(started.body.data.image).toBeUndefined();
    const pow = await solvePuzzle(started.body.data.pow as Puzzle);
    const solved = await submit({
      app_key: a.appKey,
      challenge_id: started.body.data.challenge_id,
      challenge: started.body.data.challenge,
      pow,
    });
    expect(solved.status).toBe(200);
    expect(solved.body.data.pass_token).toMatch(/^pt_/);
    const verdict = await api.post('/v1/validate', { pass_token: solved.body.data.pass_token }, a.auth);
    expect(verdict.body.data).toMatchObject({
      valid: true,
      action: 'login',
      challenge_id: started.body.data.challenge_id,
      captcha_args: { platform: 'web', user_ip: '127.0.0.1', referer: 'https://shop.test/login', pkg: null },
    });
    expect(Math.abs(verdict.body.data.captcha_args.solved_at - Date.now() / 1000)).toBeLessThan(30);
    expect(verdict.body.data.captcha_args.risk_score).toBe(10);
  });

  it('an ordinary browser gets the invisible tier at real difficulty; its solution is accepted', async () => {
    const a = await app();
    const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
    expect(started.body.data.tier).toBe('invisible');
    expect(started.body.data.pow).toMatchObject({ algorithm: 'scrypt', memoryKiB: 512 });
    const pow = await solvePuzzle(started.body.data.pow);
    const solved = await submit({
      app_key: a.appKey,
      challenge_id: started.body.data.challenge_id,
      challenge: started.body.data.challenge,
      pow,
    });
    expect(solved.status).toBe(200);
  });

  it('a challenge sealed with other proof-of-work parameters (scrypt 4 MiB, 8 hashes per sub-puzzle) still passes', async () => {
    // Challenges in flight when the parameters change carry their own inside the seal (docs/pow.md).
    const a = await app();
    const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
    const sealed = await sealedOf(a.appId, started.body.data.challenge);
    const old = createPuzzle({
      algorithm: 'scrypt',
      memoryKiB: 4096,
      iterations: 1,
      parallelism: 1,
      count: 6,
      target: targetForAttempts(8),
    });
    const hasher = nativeHasher();
    const solved = await submit({
      app_key: a.appKey,
      challenge_id: sealed.id,
      challenge: sealChallenge(api.runtime.keys, { ...sealed, pow: old }),
      pow: await solvePuzzle(old, hasher ? { hasher } : {}),
    });
    expect(solved.status).toBe(200);
    expect(solved.body.data.pass_token).toMatch(/^pt_/);
  });

  it('a scripted client (no browser headers, no signals) is sent to the hard tier: proof-of-work and an image', async () => {
    const a = await app();
    const started = await init({ app_key: a.appKey, action: 'login' }, {});
    expect(started.body.data.tier).toBe('hard');
    expect(started.body.data.pow).toBeDefined();
    expect(started.body.data.image.kind).toMatch(/^(slide|click|select)$/);
    // Solving only the proof-of-work is not enough.
    const sealed = await sealedOf(a.appId, started.body.data.challenge);
    expect(sealed.pow).toBeDefined();
    const wrong = await submit({
      app_key: a.appKey,
      challenge_id: sealed.id,
      challenge: started.body.data.challenge,
      pow: { nonces: [] },
    });
    expect(wrong.body.error).toBe('invalid_answer');
  });

  it('policy `reject` refuses high-risk requests outright', async () => {
    const a = await app({ risk_policy: { high: 'reject' } });
    const refused = await init({ app_key: a.appKey, action: 'login' }, {});
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('request_rejected');
  });

  it('image inits are popped from the pool of pre-drawn challenges, each served once', async () => {
    const a = await app({ risk_policy: { invisible_below: 0, image_below: 101 } });
    const first = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
    expect(first.body.data.tier).toBe('image');
    const pool = imagePool()!;
    // The pool fills in the background (a worker thread draws); wait until it holds some of every kind.
    await vi.waitFor(() => expect(pool.stats.rendered).toBeGreaterThanOrEqual(6), { timeout: 30_000 });
    const served = pool.stats.served;
    const views = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const res = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      views.add(JSON.stringify(res.body.data.image.view));
    }
    expect(views.size).toBe(12);
    expect(pool.stats.served).toBeGreaterThan(served);
  });

  describe('slide challenge', () => {
    it('a human-like drag passes; the image never carries the answer', async () => {
      const a = await app({ risk_policy: SLIDE_ONLY });
      const started = await init({ app_key: a.appKey, action: 'register', signals: browserSignals });
      expect(started.body.data.tier).toBe('image');
      const view = started.body.data.image.view;
      expect(view.background.src).toMatch(/^data:image\/(jpeg|webp|png);base64,/);
      const sealed = await sealedOf(a.appId, started.body.data.challenge);
      const { x } = sealed.img!.answer as { x: number };
      expect(JSON.stringify(started.body.data)).not.toContain(`"x":${x}`);
      const trajectory = humanDrag(seededRandom(7), x);
      const solved = await submit({
        app_key: a.appKey,
        challenge_id: sealed.id,
        challenge: started.body.data.challenge,
        answer: { x, input: 'pointer', trajectory },
      });
      expect(solved.status).toBe(200);
      const verdict = await api.post('/v1/validate', { pass_token: solved.body.data.pass_token }, a.auth);
      expect(verdict.body.data).toMatchObject({ valid: true, action: 'register' });
    });

    it('an instant straight-line drag to the right spot fails, and wrong answers are bounded', async () => {
      const a = await app({ risk_policy: SLIDE_ONLY });
      const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      const sealed = await sealedOf(a.appId, started.body.data.challenge);
      const { x } = sealed.img!.answer as { x: number };
      const body = { app_key: a.appKey, challenge_id: sealed.id, challenge: started.body.data.challenge };
      const robot = await submit({
        ...body,
        answer: { x, input: 'pointer', trajectory: linearDrag(seededRandom(1), x, { durationMs: 40 }) },
      });
      expect(robot.status).toBe(422);
      expect(robot.body).toMatchObject({ code: -1, error: 'invalid_answer' });
      // One answer per picture (MAX_ATTEMPTS): a wrong one spends it, and the widget fetches a new one.
      expect(robot.body.message).toMatch(/no attempts left/);
      // Spent: even the right answer is refused now.
      const third = await submit({
        ...body,
        answer: { x, input: 'pointer', trajectory: humanDrag(seededRandom(9), x) },
      });
      expect(third.status).toBe(410);
      expect(third.body.error).toBe('challenge_expired');
    });
  });

  /** `count` ascending nonces whose hashes all miss the puzzle's target. */
  async function missingNonces(puzzle: Puzzle): Promise<number[]> {
    const salt = parsePuzzle(puzzle)!.salt;
    const nonces: number[] = [];
    for (let n = 0; nonces.length < puzzle.count; n++) {
      if (!meetsTargetOf(await nativeHasher()!(nonceBytesOf(n), salt, puzzle), puzzle.target)) nonces.push(n);
    }
    return nonces;
  }

  describe('sealed challenges', () => {
    async function solvedOnce() {
      const a = await app({ test_mode: true });
      const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      const pow = await solvePuzzle(started.body.data.pow);
      const body = {
        app_key: a.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
        pow,
      };
      return { a, body };
    }

    it('a solved challenge cannot be replayed, even concurrently: one pass token per challenge', async () => {
      const { body } = await solvedOnce();
      const results = await Promise.all(Array.from({ length: 8 }, () => submit(body)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(
        results.filter((r) => r.status === 404).every((r) => r.body.error === 'challenge_not_found'),
      ).toBe(true);
      const replay = await submit(body);
      expect(replay.body.error).toBe('challenge_not_found');
    });

    it('a tampered, truncated or foreign challenge is not found', async () => {
      const { body } = await solvedOnce();
      const flipped =
        body.challenge.slice(0, 20) + (body.challenge[20] === 'A' ? 'B' : 'A') + body.challenge.slice(21);
      for (const challenge of [flipped, body.challenge.slice(0, -4), 'garbage', `${body.challenge}AA`]) {
        const res = await submit({ ...body, challenge });
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('challenge_not_found');
      }
      const other = await app({ test_mode: true });
      const foreign = await submit({ ...body, app_key: other.appKey });
      expect(foreign.body.error).toBe('challenge_not_found');
      const wrongId = await submit({ ...body, challenge_id: 'ch_someoneelse' });
      expect(wrongId.body.error).toBe('challenge_not_found');
    });

    it('brute-forcing the proof-of-work is bounded per challenge', async () => {
      const a = await app({ risk_policy: INVISIBLE_ONLY });
      const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      const body = {
        app_key: a.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
      };
      // Nonces that all miss the target: arbitrary ones would pass the one-sub-puzzle spot check 1 time in 8.
      const nonces = await missingNonces(started.body.data.pow as Puzzle);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await submit({ ...body, pow: { nonces } })).status);
      // One submission per proof-of-work challenge: a failed proof burns it (docs/pow.md, spot checks).
      expect(statuses).toEqual([422, 410, 410, 410, 410]);
    });

    it('a proof-of-work that fails the spot check is refused and burns the challenge: the full solution is refused after it', async () => {
      const a = await app({ risk_policy: INVISIBLE_ONLY });
      const started = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      const puzzle = started.body.data.pow as Puzzle;
      const solution = await solvePuzzle(puzzle, { hasher: nativeHasher() });
      const body = {
        app_key: a.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
      };
      // Every sub-puzzle skipped (nonces that miss the target, still ascending): the spot check always fails.
      const skipped = await missingNonces(puzzle);
      const cheat = await submit({ ...body, pow: { nonces: skipped } });
      expect(cheat.status).toBe(422);
      expect(cheat.body.message).toMatch(/no attempts left/);
      // Burned: even the full solution is refused now.
      const honest = await submit({ ...body, pow: solution });
      expect(honest.status).toBe(410);
      expect(honest.body.error).toBe('challenge_expired');
    });

    it('hard tier: a right image answer with a malformed proof-of-work burns the challenge at once', async () => {
      const a = await app({ risk_policy: { image_kinds: ['slide'] } });
      const started = await init({ app_key: a.appKey, action: 'login' }, {});
      expect(started.body.data.tier).toBe('hard');
      const sealed = await sealedOf(a.appId, started.body.data.challenge);
      const { x } = sealed.img!.answer as { x: number };
      const body = { app_key: a.appKey, challenge_id: sealed.id, challenge: started.body.data.challenge };
      const answer = { x, input: 'pointer', trajectory: humanDrag(seededRandom(7), x) };
      const first = await submit({ ...body, answer, pow: { nonces: [1, 2] } });
      expect(first.status).toBe(422);
      expect(first.body.message).toMatch(/no attempts left/);
      expect((await submit({ ...body, answer, pow: { nonces: [] } })).status).toBe(410);
    });
  });

  describe('server tokens at initialization', () => {
    async function issue(a: { auth: Record<string, string> }, body: Record<string, unknown>) {
      const res = await api.post('/v1/server/challenge/issue', body, a.auth);
      expect(res.status).toBe(200);
      return res.body.data.server_token as string;
    }

    it('server_token_required: refused without one, accepted with one, uid bound at issue is echoed by validate', async () => {
      const a = await app({ server_token_required: true, test_mode: true });
      const refused = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('server_token_required');
      const serverToken = await issue(a, { action: 'login', bind_uid: 'user-42' });
      const started = await init({
        app_key: a.appKey,
        action: 'login',
        server_token: serverToken,
        signals: browserSignals,
      });
      expect(started.status).toBe(200);
      const pow = await solvePuzzle(started.body.data.pow);
      const solved = await submit({
        app_key: a.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
        pow,
      });
      const verdict = await api.post('/v1/validate', { pass_token: solved.body.data.pass_token }, a.auth);
      expect(verdict.body.data).toMatchObject({ valid: true, uid: 'user-42' });
    });

    it('a server token lowers the score', async () => {
      const a = await app();
      const serverToken = await issue(a, { action: 'login' });
      const started = await init({
        app_key: a.appKey,
        action: 'login',
        server_token: serverToken,
        signals: browserSignals,
      });
      const sealed = await sealedOf(a.appId, started.body.data.challenge);
      expect(sealed.score).toBe(0);
    });

    it.each([
      ['server_token_action_mismatch', { action: 'pay' }, {}],
      ['server_token_binding_mismatch', { action: 'login', bind_ip: '10.9.8.7' }, {}],
      ['server_token_binding_mismatch', { action: 'login', bind_device_id: 'dev-1' }, { device_id: 'dev-2' }],
      ['server_token_binding_mismatch', { action: 'login', bind_fingerprint: 'fp-1' }, {}],
    ])('%s (%j)', async (code, issueBody, initExtra) => {
      const a = await app();
      const serverToken = await issue(a, issueBody);
      const res = await init({
        app_key: a.appKey,
        action: 'login',
        server_token: serverToken,
        signals: browserSignals,
        ...initExtra,
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe(code);
    });

    it('bindings that match are accepted; max_uses is enforced; forged and foreign tokens are invalid', async () => {
      const a = await app();
      const serverToken = await issue(a, {
        action: 'login',
        bind_ip: '127.0.0.1',
        bind_device_id: 'dev-1',
        bind_fingerprint: 'fp-1',
        max_uses: 2,
      });
      const body = {
        app_key: a.appKey,
        action: 'login',
        server_token: serverToken,
        device_id: 'dev-1',
        fingerprint: 'fp-1',
        signals: browserSignals,
      };
      expect((await init(body)).status).toBe(200);
      expect((await init(body)).status).toBe(200);
      const third = await init(body);
      expect(third.body.error).toBe('server_token_exhausted');
      const forged = await init({ ...body, server_token: `${serverToken.slice(0, -3)}xyz` });
      expect(forged.body.error).toBe('server_token_invalid');
      const other = await app();
      const foreign = await init({ ...body, app_key: other.appKey });
      expect(foreign.body.error).toBe('server_token_invalid');
    });

    it('an expired server token is refused', async () => {
      const a = await app();
      const expired = api.runtime.keys.sealServer({
        id: 'nope',
        app: a.appId,
        exp: Math.floor(Date.now() / 1000) - 1,
      });
      const res = await init({
        app_key: a.appKey,
        action: 'login',
        server_token: expired,
        signals: browserSignals,
      });
      expect(res.body.error).toBe('server_token_expired');
    });
  });

  describe('quota', () => {
    it('exhausted without overage: a dg_ token at once, nothing counted, validated as degraded', async () => {
      const a = await app({ monthly_quota: 1 });
      expect(
        (await init({ app_key: a.appKey, action: 'login', signals: browserSignals })).body.data.mode,
      ).toBe('challenge');
      for (let i = 0; i < 3; i++) {
        const degraded = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
        expect(degraded.status).toBe(200);
        expect(degraded.body.data).toMatchObject({ mode: 'degraded', expires_in: 300 });
        expect(degraded.body.data.pass_token).toMatch(/^dg_/);
      }
      const usage = await api.runtime.db.query.appUsage.findMany({
        where: (row, { eq }) => eq(row.appId, a.appId),
      });
      expect(usage.map((row) => row.challenges)).toEqual([1]);
      const last = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      const verdict = await api.post('/v1/validate', { pass_token: last.body.data.pass_token }, a.auth);
      expect(verdict.body).toEqual({
        code: 0,
        data: { valid: false, degraded: true, reason: 'quota_exhausted', expired: false },
      });
    });

    it('with overage the quota is exceeded, never degraded', async () => {
      const a = await app({ monthly_quota: 1, overage_allowed: true });
      for (let i = 0; i < 3; i++) {
        expect(
          (await init({ app_key: a.appKey, action: 'login', signals: browserSignals })).body.data.mode,
        ).toBe('challenge');
      }
    });

    it('an expired subscription falls back to the free plan, not to degraded mode', async () => {
      const a = await app({
        plan: 'pro',
        monthly_quota: 0,
        overage_allowed: false,
        subscription_expires_at: '2020-01-01T00:00:00Z',
      });
      const res = await init({ app_key: a.appKey, action: 'login', signals: browserSignals });
      expect(res.body.data.mode).toBe('challenge');
    });
  });

  describe('rejections', () => {
    it('unknown and disabled apps, foreign domains, bad bodies', async () => {
      expect((await init({ app_key: 'ak_nope', action: 'login' })).body.error).toBe('invalid_app_key');
      const a = await app({ allowed_domains: ['shop.test'] });
      expect(
        (await init({ app_key: a.appKey, action: 'login', referer: 'https://evil.test/' })).body.error,
      ).toBe('domain_not_allowed');
      expect(
        (
          await init({
            app_key: a.appKey,
            action: 'login',
            referer: 'https://www.shop.test/x',
            signals: browserSignals,
          })
        ).status,
      ).toBe(200);
      // A page elsewhere cannot claim an allowed referer: the browser's Origin header wins.
      const spoofed = await init(
        { app_key: a.appKey, action: 'login', referer: 'https://shop.test/', signals: browserSignals },
        { ...BROWSER, Origin: 'https://evil.test' },
      );
      expect(spoofed.body.error).toBe('domain_not_allowed');
      expect((await init({ app_key: a.appKey, action: 'bad action!' })).status).toBe(400);
      expect((await init({ app_key: a.appKey, action: 'login', signals: { extra: 1 } })).status).toBe(400);
      await api.runtime.apps.setDisabled(a.appKey, true);
      expect((await init({ app_key: a.appKey, action: 'login' })).body.error).toBe('app_disabled');
    });

    it('one IP initializing faster than the policy allows is rate limited', async () => {
      const a = await app({ risk_policy: { rate_limit: { ip_per_minute: 3, high_risk_ip_per_minute: 1 } } });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await init({ app_key: a.appKey, action: 'login', signals: browserSignals })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    });

    it('answers CORS preflights for the widget', async () => {
      const res = await fetch(`${api.url}/v1/challenge/init`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://shop.test' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      // The answer itself carries the origin only: the rest is for the preflight.
      const post = await init({ app_key: 'gh_pk_unknown', action: 'login', signals: browserSignals });
      expect(post.headers.get('access-control-allow-origin')).toBe('*');
      expect(post.headers.get('access-control-allow-methods')).toBeNull();
    });
  });
});
