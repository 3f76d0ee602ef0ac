import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientKey, compareClientIp, isIp, normalizeIp, parseIp, parseIpRange } from './ip.ts';

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
const hextet = fc.integer({ min: 0, max: 0xffff });
const ipv6Parts = fc.array(hextet, { minLength: 8, maxLength: 8 });
const ipv6 = ipv6Parts.map((h) => h.map((x) => x.toString(16)).join(':'));

describe('normalizeIp / isIp', () => {
  it('keeps canonical IPv4 and compresses IPv6', () => {
    expect(normalizeIp('203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('0.0.0.0')).toBe('0.0.0.0');
    expect(normalizeIp('255.255.255.255')).toBe('255.255.255.255');
    expect(normalizeIp('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(normalizeIp('2001:DB8::A')).toBe('2001:db8::a');
    expect(normalizeIp('::1')).toBe('::1');
    expect(normalizeIp('::')).toBe('::');
  });

  it('folds IPv4-mapped IPv6 to IPv4, in every spelling', () => {
    expect(normalizeIp('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(normalizeIp('0:0:0:0:0:ffff:cb00:7107')).toBe('203.0.113.7');
    expect(parseIp('::ffff:203.0.113.7')?.kind()).toBe('ipv4');
    fc.assert(
      fc.property(ipv4, (v4) => {
        expect(normalizeIp(`::ffff:${v4}`)).toBe(v4);
      }),
    );
  });

  it('does not fold NAT64 addresses, which are IPv6 addresses of their own', () => {
    expect(parseIp('64:ff9b::203.0.113.7')?.kind()).toBe('ipv6');
    expect(normalizeIp('64:ff9b::203.0.113.7')).toBe('64:ff9b::cb00:7107');
  });

  it('is idempotent and agrees with isIp', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          ipv4,
          ipv6,
          ipv4.map((v) => `::ffff:${v}`),
        ),
        (ip) => {
          const once = normalizeIp(ip);
          expect(once).not.toBeNull();
          expect(isIp(ip)).toBe(true);
          expect(normalizeIp(once!)).toBe(once);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses everything that is not the standard text form of an address', () => {
    for (const bad of [
      '',
      'localhost',
      '1',
      '12345',
      '3405803783',
      '1.2.3',
      '10.1',
      '1.2.3.4.5',
      '1.2.3.256',
      '010.0.0.1',
      '01.2.3.4',
      '0x7f.0.0.1',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '1.2.3.4\n',
      '1.2.3.4/24',
      '::1%eth0',
      'fe80::1%25en0',
      '::ffff:010.1.2.3',
      '1::2::3',
      '12345::',
      ':::',
      '[::1]',
      '1.2.3.4:80',
      `${'1'.repeat(70)}`,
    ]) {
      expect(isIp(bad), bad).toBe(false);
      expect(normalizeIp(bad), bad).toBeNull();
    }
    expect(isIp(42 as unknown as string)).toBe(false);
  });

  it('never throws on random input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        const normal = normalizeIp(s);
        expect(normal === null || isIp(normal)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('compareClientIp', () => {
  it('matches within the same IPv4 /24, mismatches outside it', () => {
    expect(compareClientIp('203.0.113.7', '203.0.113.7')).toBe('match');
    expect(compareClientIp('203.0.113.7', '203.0.113.250')).toBe('match');
    expect(compareClientIp('203.0.113.7', '203.0.114.7')).toBe('mismatch');
    expect(compareClientIp('203.0.113.7', '198.51.100.7')).toBe('mismatch');
    fc.assert(
      fc.property(octet, octet, octet, octet, octet, (a, b, c, d, e) => {
        expect(compareClientIp(`${a}.${b}.${c}.${d}`, `${a}.${b}.${c}.${e}`)).toBe('match');
      }),
    );
    fc.assert(
      fc.property(ipv4, ipv4, (x, y) => {
        const sameNet = x.split('.').slice(0, 3).join('.') === y.split('.').slice(0, 3).join('.');
        expect(compareClientIp(x, y)).toBe(sameNet ? 'match' : 'mismatch');
      }),
      { numRuns: 500 },
    );
  });

  it('matches within the same IPv6 /48, mismatches outside it', () => {
    expect(compareClientIp('2001:db8:1::1', '2001:db8:1:ffff::2')).toBe('match');
    expect(compareClientIp('2001:db8:1::1', '2001:db8:2::1')).toBe('mismatch');
    fc.assert(
      fc.property(ipv6Parts, ipv6Parts, (x, y) => {
        const sameNet = x.slice(0, 3).join(':') === y.slice(0, 3).join(':');
        const ax = x.map((h) => h.toString(16)).join(':');
        const ay = y.map((h) => h.toString(16)).join(':');
        // Mapped addresses fold to IPv4 and are covered below; keep this property to genuine IPv6.
        fc.pre(parseIp(ax)?.kind() === 'ipv6' && parseIp(ay)?.kind() === 'ipv6');
        expect(compareClientIp(ax, ay)).toBe(sameNet ? 'match' : 'mismatch');
      }),
      { numRuns: 500 },
    );
  });

  it('is symmetric', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4, ipv6), fc.oneof(ipv4, ipv6), (x, y) => {
        expect(compareClientIp(x, y)).toBe(compareClientIp(y, x));
      }),
      { numRuns: 500 },
    );
  });

  it('calls an IPv4/IPv6 pair unverifiable (dual-stack users), never a mismatch', () => {
    expect(compareClientIp('203.0.113.7', '2001:db8::1')).toBe('unverifiable');
    expect(compareClientIp('2001:db8::1', '203.0.113.7')).toBe('unverifiable');
    fc.assert(
      fc.property(ipv4, ipv6, (v4, v6) => {
        fc.pre(parseIp(v6)?.kind() === 'ipv6');
        expect(compareClientIp(v4, v6)).toBe('unverifiable');
      }),
      { numRuns: 300 },
    );
  });

  it('compares an IPv4-mapped IPv6 address as the IPv4 address it carries', () => {
    expect(compareClientIp('203.0.113.7', '::ffff:203.0.113.99')).toBe('match');
    expect(compareClientIp('::ffff:203.0.113.7', '203.0.113.1')).toBe('match');
    expect(compareClientIp('::ffff:203.0.113.7', '198.51.100.1')).toBe('mismatch');
  });

  it('calls anything unparsable unverifiable', () => {
    expect(compareClientIp('203.0.113.7', 'not an ip')).toBe('unverifiable');
    expect(compareClientIp('', '203.0.113.7')).toBe('unverifiable');
    expect(compareClientIp('010.0.0.1', '10.0.0.1')).toBe('unverifiable');
  });
});

describe('clientKey', () => {
  it('keeps an IPv4 address (mapped forms folded), groups IPv6 by /64, and leaves what is not an IP alone', () => {
    expect(clientKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('2001:db8:7:1::1')).toBe(clientKey('2001:db8:7:1:dead:beef:0:9'));
    expect(clientKey('2001:db8:7:1::1')).not.toBe(clientKey('2001:db8:7:2::1'));
    expect(clientKey('unknown')).toBe('unknown');
  });
});

describe('parseIpRange', () => {
  it('reads an address as its own range and a CIDR as written', () => {
    expect(parseIpRange('10.0.0.0/8')?.map(String)).toEqual(['10.0.0.0', '8']);
    expect(parseIpRange('2001:db8::/32')?.map(String)).toEqual(['2001:db8::', '32']);
    expect(parseIpRange('192.0.2.7')?.map(String)).toEqual(['192.0.2.7', '32']);
    expect(parseIpRange('::1')?.map(String)).toEqual(['::1', '128']);
    expect(parseIpRange('::ffff:192.0.2.0/24')?.map(String)).toEqual(['192.0.2.0', '24']);
  });

  it('refuses what is not a range in the standard forms', () => {
    for (const bad of [
      '',
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/',
      '10.0.0.0/8/8',
      '10.0.0.0/-1',
      '10.0.0.0/0x8',
      '010.0.0.0/8',
      '10.1/16',
      'fe80::1%eth0/64',
      'localhost',
    ])
      expect(parseIpRange(bad), bad).toBeNull();
  });
});
