import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { alternativeSettings } from '../src/challenges/alternative.ts';
import { AlternativeCounter } from '../src/challenges/alternative-limit.ts';
import { keyboardPowSeconds } from '../src/challenges/priced-pow.ts';
import { REDIS_URL, redisAvailable } from './harness.ts';

const redis = await redisAvailable('the shared alternative count');

/** The per-address count of accessible alternatives (docs/accessibility.md, "Limits"). */
describe('AlternativeCounter', () => {
  const HOUR = 3_600_000;

  it('in memory: counts per address within the hour, and starts again in the next', async () => {
    const counter = new AlternativeCounter();
    const t = 10 * HOUR + 5;
    expect(await counter.take('192.0.2.1', t)).toBe(1);
    expect(await counter.take('192.0.2.1', t + 1000)).toBe(2);
    expect(await counter.take('192.0.2.2', t + 1000)).toBe(1);
    expect(await counter.take('192.0.2.1', t + HOUR)).toBe(1);
  });

  describe.runIf(redis)('with Redis', () => {
    const clients: Redis[] = [];
    afterAll(() => {
      for (const c of clients) c.disconnect();
    });
    const client = () => {
      const c = new Redis(REDIS_URL);
      clients.push(c);
      return c;
    };

    it('two instances share one count per address, and the key expires with its hour', async () => {
      const a = new AlternativeCounter(client());
      const b = new AlternativeCounter(client());
      const ip = `test-${randomUUID()}`;
      const t = Date.now();
      expect(await a.take(ip, t)).toBe(1);
      expect(await b.take(ip, t)).toBe(2);
      expect(await a.take(ip, t)).toBe(3);
      const ttl = await clients[0]!.pttl(`gatehouse:alt:${ip}:${Math.floor(t / HOUR)}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(HOUR);
    });
  });
});

describe('price settings', () => {
  it('a bad ALTERNATIVE_POW_SECONDS or KEYBOARD_POW_SECONDS is refused with a precise sentence', () => {
    expect(alternativeSettings({})).toEqual({ baseSeconds: 20 });
    expect(keyboardPowSeconds({})).toBe(4.5);
    expect(() => alternativeSettings({ ALTERNATIVE_POW_SECONDS: 'soon' })).toThrow(/ALTERNATIVE_POW_SECONDS/);
    expect(() => keyboardPowSeconds({ KEYBOARD_POW_SECONDS: '0' })).toThrow(/KEYBOARD_POW_SECONDS/);
  });
});
