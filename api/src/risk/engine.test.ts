import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { historyKey, MemoryAnswerHistory } from './answer-history.ts';
import { BASE_SCORE, RiskEngine } from './engine.ts';
import { resolvePolicy, riskPolicy, tierFor } from './policy.ts';
import type { ClientSignals, RequestFacts } from './signals.ts';
import { MemoryVelocity } from './velocity.ts';

const facts: RequestFacts = {
  ip: '198.51.100.10',
  userAgent:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  acceptLanguage: 'en',
  secChUa: '"Chromium";v="131"',
  secChUaMobile: '?0',
  secChUaPlatform: '"Linux"',
  platform: 'web',
};
const human: ClientSignals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
const policy = resolvePolicy({});

function assess(
  overrides: {
    signals?: ClientSignals;
    serverToken?: boolean;
    policy?: object;
    facts?: Partial<RequestFacts>;
  } = {},
) {
  return new RiskEngine(new MemoryVelocity()).assess({
    appId: 'app',
    facts: { ...facts, ...overrides.facts },
    signals: 'signals' in overrides ? overrides.signals : human,
    policy: overrides.policy ? resolvePolicy(overrides.policy) : policy,
    serverToken: overrides.serverToken ?? false,
    attested: false,
  });
}

describe('RiskEngine', () => {
  it('gives an ordinary browser the base score and the invisible tier', async () => {
    expect(await assess()).toEqual({
      score: BASE_SCORE,
      tier: 'invisible',
      reasons: [],
      pressure: { doublings: 0, multiplier: 1, stage: 'base', reasons: [] },
    });
  });
  it('lowers the score for a server token, never below 0', async () => {
    const result = await assess({ serverToken: true });
    expect(result.score).toBe(0);
    expect(result.reasons).toEqual(['trust.server_token:-10']);
  });
  it('sends an automated browser to a harder tier, with its reasons', async () => {
    const result = await assess({
      signals: { ...human, webdriver: true },
      facts: { userAgent: 'HeadlessChrome/131' },
    });
    expect(result.score).toBeGreaterThanOrEqual(70);
    expect(result.tier).toBe('hard');
    expect(result.reasons).toEqual(expect.arrayContaining(['automation.webdriver:+40']));
  });
  it('rejects instead when the policy says so', async () => {
    const result = await assess({
      signals: { ...human, webdriver: true },
      facts: { userAgent: 'curl/8' },
      policy: { high: 'reject' },
    });
    expect(result.tier).toBe('reject');
  });
  it('rate-limits one IP past the policy, sooner at high risk', async () => {
    const engine = new RiskEngine(new MemoryVelocity());
    const input = { appId: 'a', facts, signals: human, serverToken: false, attested: false };
    const strict = resolvePolicy({ rate_limit: { ip_per_minute: 5, high_risk_ip_per_minute: 2 } });
    for (let i = 0; i < 5; i++) await engine.assess({ ...input, policy: strict });
    await expect(engine.assess({ ...input, policy: strict })).rejects.toMatchObject({ code: 'rate_limited' });
    const other = {
      ...input,
      facts: { ...facts, ip: '192.0.2.1', userAgent: 'curl/8' },
      signals: { webdriver: true },
    };
    await engine.assess({ ...other, policy: strict });
    await engine.assess({ ...other, policy: strict });
    await expect(engine.assess({ ...other, policy: strict })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('judges alike with counts read in process (hitNow, readNow) and counts that only answer a promise', async () => {
    // As Redis's: hit and read only, so the engine takes its Promise.all path.
    const velocity = new MemoryVelocity();
    const answers = new MemoryAnswerHistory();
    const shared = new RiskEngine({ hit: (keys, now) => velocity.hit(keys, now) }, undefined, undefined, {
      read: (key, now) => answers.read(key, now),
      record: (key, e, now) => answers.record(key, e, now),
      replays: answers.replays,
    });
    const local = new RiskEngine(new MemoryVelocity(), undefined, undefined, new MemoryAnswerHistory());
    // Init asks assessNow first: the same answers without a promise, none for shared counts.
    const now = new RiskEngine(new MemoryVelocity(), undefined, undefined, new MemoryAnswerHistory());
    const strict = resolvePolicy({
      velocity: { ip: [2, 4], prefix: [3, 6], app: 5 },
      rate_limit: { ip_per_minute: 8, high_risk_ip_per_minute: 8 },
    });
    const input = { appId: 'a', facts, signals: human, serverToken: false, attested: false, policy: strict };
    for (let i = 0; i < 10; i++) {
      // Wrong answers from the address: both engines read them (answers.failed, then the refusal).
      if (i >= 3) {
        await shared.answers.record(historyKey('a', facts.ip), 'failed');
        await local.answers.record(historyKey('a', facts.ip), 'failed');
        await now.answers.record(historyKey('a', facts.ip), 'failed');
      }
      const settle = (p: Promise<unknown>) =>
        p.then(
          (v) => ({ v }),
          (e: { code?: string }) => ({ e: e.code }),
        );
      const [a, b] = await Promise.all([settle(shared.assess(input)), settle(local.assess(input))]);
      expect(b, `init ${i}`).toEqual(a);
      expect(shared.assessNow(input)).toBeUndefined();
      let c: unknown;
      try {
        c = { v: now.assessNow(input) };
      } catch (e) {
        c = { e: (e as { code?: string }).code };
      }
      expect(c, `init ${i}, assessNow`).toEqual(a);
    }
    // The velocity findings and the rate limit were reached on the way.
    const last = await local.assess({ ...input, facts: { ...facts, ip: '198.51.100.11' } }).catch((e) => e);
    expect(JSON.stringify(last)).toMatch(/prefix_velocity|rate_limited/);
  });

  it('invariant 3: client-sent signals never lower the score', async () => {
    const signalArb: fc.Arbitrary<ClientSignals> = fc.record(
      {
        webdriver: fc.boolean(),
        headless: fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
        languages: fc.array(fc.constantFrom('en', 'fr', 'de'), { maxLength: 3 }),
        screen: fc.record({ w: fc.integer({ min: 0, max: 4000 }), h: fc.integer({ min: 0, max: 4000 }) }),
        pointer: fc.record({
          moves: fc.integer({ min: 0, max: 500 }),
          intervalStdMs: fc.double({ min: 0, max: 50, noNaN: true }),
          straightness: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
        keys: fc.record({
          presses: fc.integer({ min: 0, max: 100 }),
          intervalStdMs: fc.double({ min: 0, max: 200, noNaN: true }),
        }),
      },
      { requiredKeys: [] },
    );
    const baseline = (await assess({ signals: {} })).score;
    await fc.assert(
      fc.asyncProperty(signalArb, async (signals) => {
        expect((await assess({ signals })).score).toBeGreaterThanOrEqual(baseline);
      }),
      { numRuns: 300 },
    );
  });
});

describe('policy', () => {
  it('picks tiers by thresholds', () => {
    expect(tierFor(0, policy)).toBe('invisible');
    expect(tierFor(34, policy)).toBe('invisible');
    expect(tierFor(35, policy)).toBe('image');
    expect(tierFor(70, policy)).toBe('hard');
  });
  it('refuses thresholds out of order, and a stored policy that no longer parses falls back to defaults', () => {
    expect(riskPolicy.safeParse({ invisible_below: 80, image_below: 50 }).success).toBe(false);
    expect(resolvePolicy({ invisible_below: 'x' })).toEqual(policy);
  });
  it('serves the slide only to a policy that names it (docs/adversarial.md: a hole finder passes it)', () => {
    expect(riskPolicy.parse({}).image_kinds).toEqual(['click', 'select']);
    expect(resolvePolicy(null).image_kinds).not.toContain('slide');
    expect(riskPolicy.parse({ image_kinds: ['slide'] }).image_kinds).toEqual(['slide']);
  });
});
