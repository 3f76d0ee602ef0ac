import { describe, expect, it } from 'vitest';
import { RiskEngine } from './engine.ts';
import { memoByIp } from './ip-memo.ts';
import { resolvePolicy } from './policy.ts';
import { MemoryVelocity } from './velocity.ts';

describe('memoByIp', () => {
  it('derives once per address, undefined and null answers included', () => {
    const asked: string[] = [];
    const memo = memoByIp((ip) => {
      asked.push(ip);
      return ip === 'a' ? undefined : ip === 'b' ? null : ip.length;
    });
    for (let i = 0; i < 3; i++) {
      expect(memo('a')).toBeUndefined();
      expect(memo('b')).toBeNull();
      expect(memo('ccc')).toBe(3);
    }
    expect(asked).toEqual(['a', 'b', 'ccc']);
  });

  it('starts over past its bound rather than growing', () => {
    const asked: string[] = [];
    const memo = memoByIp((ip) => asked.push(ip), 2);
    memo('a');
    memo('b');
    memo('c'); // full: forgets a and b, keeps c
    memo('c');
    memo('a');
    expect(asked).toEqual(['a', 'b', 'c', 'a']);
  });
});

/** The policy's own lists are memoized per compiled policy: a changed policy is a new object, judged afresh. */
describe('reputation lists of a changed policy', () => {
  it('apply to an address the engine has already judged under the old lists', async () => {
    const engine = new RiskEngine(new MemoryVelocity());
    const facts = {
      ip: '203.0.113.9',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0',
      acceptLanguage: 'en',
      secChUa: '',
      secChUaMobile: '',
      secChUaPlatform: '',
      platform: 'web',
    };
    const judge = async (stored: object) =>
      (
        await engine.assess({
          appId: 'app',
          facts,
          signals: { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } },
          policy: resolvePolicy(stored),
          serverToken: false,
          attested: false,
        })
      ).reasons;
    expect(await judge({ reputation: { deny: ['203.0.113.0/24'] } })).toContain('network.deny_list:+60');
    expect(await judge({ reputation: { allow: ['203.0.113.0/24'] } })).toContain('network.allow_list:-15');
    expect(await judge({ reputation: { datacenter: ['203.0.113.0/24'] } })).toContain(
      'network.datacenter:+25',
    );
    expect(await judge({})).toEqual([]);
  });
});
