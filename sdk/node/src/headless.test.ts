import { createPuzzle, TEST_MODE_POW } from '@gatehouse/core/pow';
import { describe, expect, it } from 'vitest';
import { GatehouseConnectionError } from './errors.ts';
import { GatehouseChallengeError, solveChallenge } from './headless.ts';

/**
 * The headless client's continuity, against scripted hosts: the main API first on every solve, the
 * bypass hosts after a real failure, back to the main API on `service_online`, `co_` when nothing can
 * verify. Each host answers its own script, so the order of requests is what the client chose.
 */

const MAIN = 'https://gh.example.com';
const BP1 = 'https://bypass-a.example.com';
const BP2 = 'https://bypass-b.example.com';
type Reply = Response | Error | (() => Response);

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const fail = (status: number, error: string) => json(status, { code: -1, error, message: error });
const down = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
const puzzle = () => createPuzzle(TEST_MODE_POW);
const init = (extra: object = {}) =>
  json(200, {
    code: 0,
    data: {
      mode: 'challenge',
      challenge_id: 'ch_1',
      challenge: 'sealed',
      tier: 'invisible',
      pow: puzzle(),
      ...extra,
    },
  });
const submit = (token: string) =>
  json(200, { code: 0, data: { pass_token: token, challenge_id: 'ch_1', expires_in: 300 } });

function hosts(script: Record<string, Reply[]>) {
  const calls: string[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const u = new URL(url);
    calls.push(
      `${init.method} ${u.origin === MAIN ? 'main' : u.origin === BP1 ? 'bp1' : 'bp2'}${u.pathname}`,
    );
    const reply = script[u.origin]?.shift();
    if (!reply) throw down();
    if (reply instanceof Error) throw reply;
    return typeof reply === 'function' ? reply() : reply;
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const base = { baseUrl: MAIN, appKey: 'ak_t', action: 'login', bypassServers: [BP1, BP2] };

describe('solveChallenge: continuity', () => {
  it('the main API answers: a pt_ token, route main', async () => {
    const h = hosts({ [MAIN]: [init(), submit('pt_1')] });
    const solved = await solveChallenge({ ...base, fetch: h.fetch });
    expect(solved).toMatchObject({
      passToken: 'pt_1',
      route: 'main',
      host: MAIN,
      clientOnly: false,
      mainFailure: null,
    });
    expect(h.calls).toEqual(['POST main/v1/challenge/init', 'POST main/v1/challenge/submit']);
  });

  it('the main API down: the first bypass host that answers gives an offline_ token', async () => {
    const h = hosts({
      [MAIN]: [down()],
      [BP1]: [fail(502, 'bad_gateway')],
      [BP2]: [init(), submit('offline_2')],
    });
    const solved = await solveChallenge({ ...base, fetch: h.fetch });
    expect(solved).toMatchObject({ passToken: 'offline_2', route: 'standby', host: BP2, tier: 'invisible' });
    expect(solved.mainFailure).toMatch(/^network_error: Could not reach Gatehouse/);
    expect(h.calls).toEqual([
      'POST main/v1/challenge/init',
      'POST bp1/v1/challenge/init',
      'POST bp2/v1/challenge/init',
      'POST bp2/v1/challenge/submit',
    ]);
  });

  it('the main API failing at submission (a 5xx) also switches, with a fresh challenge on the standby', async () => {
    const h = hosts({
      [MAIN]: [init(), fail(503, 'service_unavailable')],
      [BP1]: [init(), submit('offline_1')],
    });
    const solved = await solveChallenge({ ...base, fetch: h.fetch });
    expect(solved).toMatchObject({ passToken: 'offline_1', route: 'standby' });
    expect(solved.mainFailure).toMatch(/^service_unavailable/);
  });

  it('switches back as soon as the main API answers: it is asked first on every solve', async () => {
    const h = hosts({ [MAIN]: [down(), init(), submit('pt_back')], [BP1]: [init(), submit('offline_1')] });
    expect((await solveChallenge({ ...base, fetch: h.fetch })).route).toBe('standby');
    expect(await solveChallenge({ ...base, fetch: h.fetch })).toMatchObject({
      route: 'main',
      passToken: 'pt_back',
    });
  });

  it('service_online from the standby (it has not seen the outage yet): back to the main API, then again', async () => {
    const h = hosts({
      [MAIN]: [down(), down()],
      [BP1]: [fail(503, 'service_online'), init(), submit('offline_1')],
    });
    const solved = await solveChallenge({ ...base, fetch: h.fetch });
    expect(solved.route).toBe('standby');
    expect(h.calls).toEqual([
      'POST main/v1/challenge/init',
      'POST bp1/v1/challenge/init',
      'POST main/v1/challenge/init',
      'POST bp1/v1/challenge/init',
      'POST bp1/v1/challenge/submit',
    ]);
  });

  it('both bypass hosts down: a client-only co_ token, flagged; or the error when asked not to', async () => {
    const h = hosts({});
    const solved = await solveChallenge({ ...base, fetch: h.fetch });
    expect(solved).toMatchObject({ route: 'client-only', clientOnly: true, tier: 'client-only', host: null });
    expect(solved.passToken).toMatch(/^co_[A-Za-z0-9_-]{24}$/);
    expect(h.calls).toHaveLength(3);
    const strict = solveChallenge({ ...base, fetch: h.fetch, clientOnlyFallback: false });
    await expect(strict).rejects.toBeInstanceOf(GatehouseConnectionError);
  });

  it('a standby saying service_online for longer than failoverWaitMs: client-only', async () => {
    const online = () => fail(503, 'service_online');
    const h = hosts({ [BP1]: Array(20).fill(online) });
    const solved = await solveChallenge({ ...base, fetch: h.fetch, failoverWaitMs: 300 });
    expect(solved.route).toBe('client-only');
    expect(h.calls.filter((c) => c.startsWith('POST main')).length).toBeGreaterThan(1);
  });

  it('never switches on a 4xx: the answer is thrown as before', async () => {
    const h = hosts({ [MAIN]: [fail(401, 'invalid_app_key')] });
    await expect(solveChallenge({ ...base, fetch: h.fetch })).rejects.toMatchObject({
      code: 'invalid_app_key',
    });
    expect(h.calls).toEqual(['POST main/v1/challenge/init']);
  });

  it('an ordinary app on the standby gets a slide: refused as an image tier, no co_', async () => {
    const h = hosts({ [MAIN]: [down()], [BP1]: [init({ tier: 'hard', image: { kind: 'slide' } })] });
    const error = await solveChallenge({ ...base, fetch: h.fetch }).catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseChallengeError);
    expect(error.code).toBe('image_tier');
  });

  it('discovers the bypass hosts from the main API on first contact and keeps them', async () => {
    const standby = json(200, { code: 0, data: { bypass: [BP1], fallback: [] } });
    const h = hosts({
      [MAIN]: [standby, init(), submit('pt_1'), down()],
      [BP1]: [init(), submit('offline_1')],
    });
    const options = { baseUrl: MAIN, appKey: 'ak_t', action: 'login', fetch: h.fetch };
    expect((await solveChallenge(options)).route).toBe('main');
    expect((await solveChallenge(options)).route).toBe('standby');
    expect(h.calls.filter((c) => c === 'GET main/v1/standby')).toHaveLength(1);
  });
});
