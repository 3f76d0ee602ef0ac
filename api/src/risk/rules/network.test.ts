import { describe, expect, it } from 'vitest';
import { Reputation } from '../reputation.ts';
import { MemoryVelocity } from '../velocity.ts';
import { networkPrefix, networkRules, velocityKeys } from './network.ts';

const thresholds = { ip: [3, 6] as [number, number], prefix: [5, 10] as [number, number], app: 15 };

async function hits(velocity: MemoryVelocity, ip: string, n: number, appId = 'app1') {
  let last = await networkRules({ ip, appId }, velocity, [], thresholds);
  for (let i = 1; i < n; i++) last = await networkRules({ ip, appId }, velocity, [], thresholds);
  return last.findings.map((f) => f.reason);
}

describe('networkRules', () => {
  it('groups IPv4 by /24 and IPv6 by /48', () => {
    expect(networkPrefix('198.51.100.77')).toBe('198.51.100.0/24');
    expect(networkPrefix('2001:db8:abcd:12::1')).toBe('2001:db8:abcd::/48');
    expect(networkPrefix('::ffff:198.51.100.77')).toBe('198.51.100.0/24');
  });
  it('adds points as one IP speeds up, then more', async () => {
    const velocity = new MemoryVelocity();
    expect(await hits(velocity, '198.51.100.1', 3)).toEqual([]);
    expect(await hits(velocity, '198.51.100.1', 1)).toEqual(['network.ip_velocity']);
    expect(await hits(velocity, '198.51.100.1', 3)).toContain('network.ip_velocity_high');
  });
  it('counts a spread of IPs in one prefix', async () => {
    const velocity = new MemoryVelocity();
    for (let i = 1; i <= 6; i++) await hits(velocity, `198.51.100.${i}`, 1);
    expect(await hits(velocity, '198.51.100.200', 1)).toContain('network.prefix_velocity');
  });
  it('counts per app: another app is not affected', async () => {
    const velocity = new MemoryVelocity();
    await hits(velocity, '198.51.100.1', 8, 'app1');
    expect(await hits(velocity, '198.51.100.1', 1, 'app2')).toEqual([]);
  });
  it('applies the reputation lists', async () => {
    const reputation = new Reputation({
      deny: ['192.0.2.0/24'],
      datacenter: ['203.0.113.0/24'],
      allow: ['10.1.0.0/16'],
    });
    const reasons = async (ip: string) =>
      (await networkRules({ ip, appId: 'a' }, new MemoryVelocity(), [reputation], thresholds)).findings.map(
        (f) => f.reason,
      );
    expect(await reasons('192.0.2.44')).toEqual(['network.deny_list']);
    expect(await reasons('203.0.113.5')).toEqual(['network.datacenter']);
    expect(await reasons('10.1.4.4')).toEqual(['network.allow_list']);
    expect(await reasons('198.51.100.1')).toEqual([]);
  });
});

describe('Reputation', () => {
  it('rejects a malformed range with the source named', () => {
    expect(() => new Reputation({ deny: ['not-a-cidr'] }, 'lists.json')).toThrow(/lists.json: "not-a-cidr"/);
  });
});

describe('MemoryVelocity', () => {
  it('slides: the previous minute weighs in, the one before does not', async () => {
    const velocity = new MemoryVelocity();
    const t0 = 60_000 * 1000;
    for (let i = 0; i < 10; i++) await velocity.hit(['k'], t0 + 1000);
    const [halfway] = await velocity.hit(['k'], t0 + 60_000 + 30_000);
    expect(halfway).toBeCloseTo(1 + 10 * 0.5);
    const [later] = await velocity.hit(['k'], t0 + 180_000);
    expect(later).toBe(1);
  });
});

/** The keys are remembered per app and address: the same answer as building them, however many. */
describe('velocityKeys', () => {
  it('names the address, its prefix and the app, the same array again for the same pair', () => {
    const first = velocityKeys({ appId: 'a', ip: '198.51.100.77' });
    expect(first).toEqual(['ip:a:198.51.100.77', 'net:a:198.51.100.0/24', 'app:a']);
    expect(velocityKeys({ appId: 'a', ip: '198.51.100.77' })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(velocityKeys({ appId: 'b', ip: '198.51.100.77' })).toEqual([
      'ip:b:198.51.100.77',
      'net:b:198.51.100.0/24',
      'app:b',
    ]);
    expect(velocityKeys({ appId: 'a', ip: '2001:db8:abcd:12::1' })).toEqual([
      'ip:a:2001:db8:abcd:12::1',
      'net:a:2001:db8:abcd::/48',
      'app:a',
    ]);
  });

  it('stays right past its bounds (many addresses, many apps)', () => {
    for (let i = 0; i < 25_000; i++) {
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const appId = `app${i % 1_500}`;
      const keys = velocityKeys({ appId, ip });
      if (i % 997 === 0 || i > 24_990) {
        expect(keys).toEqual([`ip:${appId}:${ip}`, `net:${appId}:${networkPrefix(ip)}`, `app:${appId}`]);
      }
    }
    expect(velocityKeys({ appId: 'app7', ip: '10.0.0.7' })).toEqual([
      'ip:app7:10.0.0.7',
      'net:app7:10.0.0.0/24',
      'app:app7',
    ]);
  });
});
