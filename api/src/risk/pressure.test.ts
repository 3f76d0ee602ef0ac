import { difficultyForScore, expectedAttempts } from '@gatehouse/core/pow';
import { describe, expect, it } from 'vitest';
import { RiskEngine } from './engine.ts';
import { resolvePolicy } from './policy.ts';
import {
  DEFAULT_PRESSURE,
  internalAddress,
  pressureOf,
  pressurePolicy,
  pressureSources,
  pricedPowParams,
} from './pressure.ts';
import { MemoryVelocity } from './velocity.ts';

describe('pressure pricing', () => {
  it('the base price within the allowance, one doubling per step past it, the most pressed source sets it', () => {
    const { ip, prefix } = DEFAULT_PRESSURE;
    expect(pressureOf([ip.allowance, 1], ['ip', 'prefix'])).toMatchObject({ multiplier: 1, stage: 'base' });
    expect(pressureOf([ip.allowance + ip.step, 1], ['ip', 'prefix'])).toMatchObject({
      doublings: 1,
      multiplier: 2,
      stage: 'priced',
      reasons: ['pressure.ip:+1'],
    });
    const both = pressureOf([ip.allowance + ip.step, prefix.allowance + 3 * prefix.step], ['ip', 'prefix']);
    expect(both).toMatchObject({ doublings: 3, multiplier: 8 });
    expect(both.reasons).toEqual(['pressure.ip:+1', 'pressure.prefix:+3']);
  });

  it('the image stage, then the refusal with a wait that shrinks as the count falls back', () => {
    const { ip, image_at, reject_at } = DEFAULT_PRESSURE;
    expect(pressureOf([ip.allowance + image_at * ip.step], ['ip']).stage).toBe('image');
    const refusedFrom = ip.allowance + reject_at * ip.step;
    const refused = pressureOf([refusedFrom + 20], ['ip']);
    expect(refused.stage).toBe('reject');
    const sooner = pressureOf([refusedFrom], ['ip']);
    expect(sooner.retryAfterSeconds).toBeGreaterThan(0);
    expect(sooner.retryAfterSeconds).toBeLessThan(refused.retryAfterSeconds!);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
  });

  it('policy: defaults reach the refusal; the image stage may not come after it', () => {
    expect(DEFAULT_PRESSURE.reject_at).toBeGreaterThan(DEFAULT_PRESSURE.image_at);
    expect(resolvePolicy({}).pressure).toEqual(DEFAULT_PRESSURE);
    expect(resolvePolicy({ pressure: { ip: { allowance: 500 } } }).pressure.ip).toEqual({
      allowance: 500,
      step: DEFAULT_PRESSURE.ip.step,
    });
    expect(pressurePolicy.safeParse({ image_at: 12, reject_at: 10 }).success).toBe(false);
    expect(pressurePolicy.safeParse({ ip: { step: 0 } }).success).toBe(false);
    expect(pressurePolicy.safeParse({ ip: { alowance: 50 } }).success).toBe(false);
    expect(pressurePolicy.safeParse({ rejects_at: 50 }).success).toBe(false);
  });

  it('sources: the client (an IPv6 /64), its network and a hosting provider; none for internal addresses', () => {
    expect(pressureSources('a', '198.51.100.7', undefined).keys).toEqual([
      'ip:a:198.51.100.7',
      'net:a:198.51.100.0/24',
    ]);
    const v6 = pressureSources('a', '2001:db8:1:2:3::9', 'Some Cloud');
    expect(v6.sources).toEqual(['ip', 'prefix', 'datacenter']);
    expect(v6.keys[0]).toBe(pressureSources('a', '2001:db8:1:2:ffff::1', undefined).keys[0]);
    expect(v6.keys[2]).toBe('dc:a:Some Cloud');
    // The same frozen keys for the same app and address; other keys for another provider.
    expect(pressureSources('a', '198.51.100.7', undefined)).toBe(
      pressureSources('a', '198.51.100.7', undefined),
    );
    expect(pressureSources('a', '198.51.100.7', 'X').keys).toEqual([
      'ip:a:198.51.100.7',
      'net:a:198.51.100.0/24',
      'dc:a:X',
    ]);
    expect(pressureSources('a', '198.51.100.7', 'X').shareKeys).toHaveLength(2);
    expect(pressureSources('a', '10.0.0.1', undefined).keys).toEqual([]);
    for (const ip of ['127.0.0.1', '10.1.2.3', '192.168.0.9', '100.64.0.1', 'fd00::1', '::1'])
      expect([ip, internalAddress(ip)]).toEqual([ip, true]);
    for (const ip of ['198.51.100.7', '8.8.8.8', '2001:db8::1'])
      expect([ip, internalAddress(ip)]).toEqual([ip, false]);
  });

  it('the priced puzzle: the base one at the base price, more work as the multiplier grows, never less than the tier', () => {
    const base = difficultyForScore(10);
    expect(pricedPowParams(base, 10, 1)).toBe(base);
    let last = expectedAttempts(base);
    for (const multiplier of [2, 4, 16, 256, 1024]) {
      const work = expectedAttempts(pricedPowParams(base, 10, multiplier));
      expect(work).toBeGreaterThan(last);
      expect(work / expectedAttempts(base)).toBeGreaterThan(multiplier * 0.8);
      last = work;
    }
    const hard = difficultyForScore(90);
    expect(pricedPowParams(hard, 10, 2)).toBe(hard);
  });

  it('the engine prices a paced address on its own clock, and an allow-listed one never', async () => {
    const engine = new RiskEngine(new MemoryVelocity());
    let now = Date.UTC(2026, 0, 1);
    engine.clock = () => now;
    const policy = resolvePolicy({ reputation: { allow: ['198.51.100.200'] } });
    const input = (ip: string) => ({
      appId: 'a',
      facts: {
        ip,
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0',
        acceptLanguage: 'en',
        secChUa: '"Chromium";v="131"',
        secChUaMobile: '?0',
        secChUaPlatform: '"Linux"',
        platform: 'web',
      },
      signals: { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } },
      policy,
      serverToken: false,
      attested: false,
    });
    const stages: string[] = [];
    for (let i = 0; i < 200; i++) {
      now += 20_000;
      const a = await engine.assess(input('198.51.100.7'));
      stages.push(a.pressure.stage);
      expect((await engine.assess(input('198.51.100.200'))).pressure.stage).toBe('base');
      if (a.tier === 'reject') break;
    }
    expect(stages[0]).toBe('base');
    expect(stages).toContain('priced');
    expect(stages).toContain('image');
    expect(stages.at(-1)).toBe('reject');
  });
});
