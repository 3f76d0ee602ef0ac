import { describe, expect, it } from 'vitest';
import {
  type Attempt,
  bypassOrder,
  clientOnlyToken,
  correctMain,
  judge,
  MAX_MAIN_ATTEMPTS,
  nextTarget,
  ONLINE_RETRY_DELAY_MS,
  type PlanInput,
  type Target,
  TIMEOUTS,
} from './failover.ts';
import { GatehouseError } from './transport.ts';

const MAIN = 'https://api.example';
const B1 = 'https://bypass1.example';
const B2 = 'https://bypass2.example';
const input: PlanInput = { main: MAIN, bypass: [B1, B2], mainSuspect: false };

/** Plays a plan: each target gets the verdict `answer(target)` until the plan ends; returns the walk. */
function walk(plan: PlanInput, answer: (t: Target, n: number) => Attempt['verdict']) {
  const attempts: Attempt[] = [];
  for (let n = 0; n < 50; n++) {
    const next = nextTarget(plan, attempts);
    if (typeof next === 'string') return { steps: attempts.map((a) => a.target.base), end: next, attempts };
    attempts.push({ target: next, verdict: answer(next, n) });
  }
  throw new Error('the plan never ends');
}

describe('judge: failover only after a real failure', () => {
  it('network errors, timeouts and 5xx fail over', () => {
    expect(judge(new GatehouseError('network_error', 'Failed to fetch'))).toBe('failover');
    expect(judge(new GatehouseError('timeout', 'no answer'))).toBe('failover');
    expect(judge(new GatehouseError('bad_response', 'HTML', 502))).toBe('failover');
    expect(judge(new GatehouseError('service_unavailable', 'db down', 503))).toBe('failover');
    expect(judge(new GatehouseError('internal_error', 'x', 500))).toBe('failover');
  });

  it('service_online is its own verdict, whatever the status', () => {
    expect(judge(new GatehouseError('service_online', 'The main API is online.', 503))).toBe('online');
  });

  it('a 4xx is an answer, never a reason to switch', () => {
    for (const [code, status] of [
      ['invalid_app_key', 401],
      ['domain_not_allowed', 403],
      ['server_token_required', 403],
      ['invalid_request', 400],
      ['rate_limited', 429],
      ['invalid_answer', 422],
      ['challenge_expired', 410],
    ] as const) {
      expect(judge(new GatehouseError(code, code, status)), code).toBe('answer');
    }
  });

  it('anything that is not a GatehouseError (an abort, a bug) is passed through', () => {
    expect(judge(new DOMException('aborted', 'AbortError'))).toBe('answer');
    expect(judge(new TypeError('x'))).toBe('answer');
  });
});

describe('nextTarget: where an initialization goes', () => {
  it('starts with the main API; a short probe when it failed lately', () => {
    expect(nextTarget(input, [])).toEqual({ kind: 'main', base: MAIN, timeoutMs: TIMEOUTS.main, delayMs: 0 });
    expect(nextTarget({ ...input, mainSuspect: true }, [])).toMatchObject({
      base: MAIN,
      timeoutMs: TIMEOUTS.mainSuspect,
    });
    expect(TIMEOUTS.mainSuspect).toBeLessThan(TIMEOUTS.main);
  });

  it('main down: tries both standby hosts in order, stopping at the first that answers', () => {
    const first = walk(input, (t) => (t.kind === 'main' ? 'failover' : 'failover'));
    expect(first.steps).toEqual([MAIN, B1, B2]);
    expect(first.end).toBe('client-only');
    expect(first.attempts[1]?.target).toMatchObject({ kind: 'bypass', timeoutMs: TIMEOUTS.bypass });
  });

  it('main and both standby hosts unreachable: client-only (co_)', () => {
    expect(walk(input, () => 'failover').end).toBe('client-only');
  });

  it('no standby host known: client-only right after the main API failed', () => {
    const r = walk({ ...input, bypass: [] }, () => 'failover');
    expect(r.steps).toEqual([MAIN]);
    expect(r.end).toBe('client-only');
  });

  it('service_online from a standby host: back to the main API at once, with a long timeout', () => {
    const attempts: Attempt[] = [
      { target: { kind: 'main', base: MAIN, timeoutMs: TIMEOUTS.main, delayMs: 0 }, verdict: 'failover' },
      { target: { kind: 'bypass', base: B1, timeoutMs: TIMEOUTS.bypass, delayMs: 0 }, verdict: 'online' },
    ];
    expect(nextTarget(input, attempts)).toEqual({
      kind: 'main',
      base: MAIN,
      timeoutMs: TIMEOUTS.mainConfirmed,
      delayMs: 0,
    });
  });

  it('main fails again after a service_online: both standby hosts again (they may serve by now)', () => {
    let round = 0;
    const r = walk(input, (t) => {
      if (t.kind === 'main') round++;
      return t.kind === 'bypass' && round === 1 ? 'online' : 'failover';
    });
    expect(r.steps).toEqual([MAIN, B1, MAIN, B1, B2]);
    expect(r.end).toBe('client-only');
  });

  it('standby keeps saying the main API is up while it fails from here: bounded, paused, then client-only', () => {
    const r = walk(input, (t) => (t.kind === 'main' ? 'failover' : 'online'));
    expect(r.attempts.filter((a) => a.target.kind === 'main')).toHaveLength(MAX_MAIN_ATTEMPTS);
    expect(r.end).toBe('client-only');
    const delays = r.attempts.filter((a) => a.target.kind === 'main').map((a) => a.target.delayMs);
    expect(delays).toEqual([0, 0, ONLINE_RETRY_DELAY_MS, ONLINE_RETRY_DELAY_MS]);
  });

  it('the main API answers service_online itself (apiServer names a standby host): the correct base once', () => {
    const misdirected = { ...input, main: B1, correctMain: MAIN };
    const r = walk(misdirected, (t) => (t.base === B1 ? 'online' : 'failover'));
    // The correct base failed too: the standby hosts, never the misdirected one as "standby".
    expect(r.steps).toEqual([B1, MAIN, B2]);
    expect(r.end).toBe('client-only');
    expect(walk(misdirected, () => 'online').steps).toEqual([B1, MAIN]);
    expect(walk(misdirected, () => 'online').end).toBe('misdirected');
  });

  it('the main API answers service_online and no correct base is known: misdirected (an error)', () => {
    const r = walk({ ...input, main: B1 }, () => 'online');
    expect(r.steps).toEqual([B1]);
    expect(r.end).toBe('misdirected');
  });
});

describe('helpers', () => {
  it('bypassOrder puts the host that answered last first', () => {
    expect(bypassOrder([B1, B2], B2)).toEqual([B2, B1]);
    expect(bypassOrder([B1, B2], undefined)).toEqual([B1, B2]);
    expect(bypassOrder([B1, B2], 'https://gone.example')).toEqual([B1, B2]);
  });

  it('correctMain: the loader origin, unless it is the misdirected host or a standby host', () => {
    expect(correctMain(B1, MAIN, [B1, B2])).toBe(MAIN);
    expect(correctMain(`${B1}/`, `${B1}`, [])).toBeUndefined();
    expect(correctMain(MAIN, B2, [B1, B2])).toBeUndefined();
  });

  it('client-only tokens: co_ and 24 random bytes in base64url, different each time', () => {
    const token = clientOnlyToken();
    expect(token).toMatch(/^co_[A-Za-z0-9_-]{32}$/);
    expect(clientOnlyToken()).not.toBe(token);
    expect(clientOnlyToken((b) => b.fill(255))).toBe(`co_${'_'.repeat(32)}`);
  });
});
