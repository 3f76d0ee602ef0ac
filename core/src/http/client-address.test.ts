import { describe, expect, it } from 'vitest';
import {
  type ClientAddressConfig,
  clientAddress,
  clientAddressFrom,
  loadClientAddressConfig,
  parseTrustedProxies,
} from './client-address.ts';

const xff = (trusted: string): ClientAddressConfig => ({
  trustedProxies: parseTrustedProxies(trusted),
  header: 'x-forwarded-for',
});
const fwd = (trusted: string): ClientAddressConfig => ({
  trustedProxies: parseTrustedProxies(trusted),
  header: 'forwarded',
});

describe('clientAddress', () => {
  it('takes the socket peer when no proxy is declared, whatever the headers say', () => {
    expect(clientAddress('198.51.100.7', '203.0.113.1', xff(''))).toBe('198.51.100.7');
    expect(clientAddress('::ffff:198.51.100.7', undefined, xff(''))).toBe('198.51.100.7');
  });

  it('ignores the header when the peer is not a declared proxy', () => {
    expect(clientAddress('198.51.100.7', '203.0.113.1', xff('10.0.0.0/8'))).toBe('198.51.100.7');
  });

  it('reads from the right behind one proxy: what the client wrote on the left is never reached', () => {
    const config = xff('private');
    expect(clientAddress('10.1.2.3', '198.51.100.7', config)).toBe('198.51.100.7');
    expect(clientAddress('10.1.2.3', '203.0.113.66, 198.51.100.7', config)).toBe('198.51.100.7');
    expect(clientAddress('10.1.2.3', ['203.0.113.66', '198.51.100.7'], config)).toBe('198.51.100.7');
  });

  it('walks through every declared proxy, and no further', () => {
    const config = xff('10.0.0.0/8, 192.0.2.0/24');
    expect(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.7, 192.0.2.10', config)).toBe('198.51.100.7');
    // A client inside a trusted range is walked past only as far as the header goes.
    expect(clientAddress('10.1.2.3', '10.9.9.9', config)).toBe('10.9.9.9');
  });

  it('counts hops: the n-th entry from the right, the leftmost when the chain is shorter', () => {
    expect(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7, 192.0.2.10', xff('2'))).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7', xff('1'))).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', '198.51.100.7', xff('3'))).toBe('198.51.100.7');
  });

  it('stops at the last address when an entry is not one', () => {
    const config = xff('private');
    for (const junk of [
      'unknown',
      'evil',
      '',
      '1.2.3',
      '010.0.0.1',
      '1.2.3.4%eth0',
      '<script>',
      'x'.repeat(100),
    ]) {
      expect(clientAddress('10.1.2.3', `${junk}`, config)).toBe('10.1.2.3');
      expect(clientAddress('10.1.2.3', `198.51.100.7, ${junk}`, config)).toBe('10.1.2.3');
    }
  });

  it('takes ports and brackets off a hop', () => {
    const config = xff('private');
    expect(clientAddress('10.1.2.3', '198.51.100.7:4711', config)).toBe('198.51.100.7');
    expect(clientAddress('10.1.2.3', '[2001:db8::1]:4711', config)).toBe('2001:db8::1');
    expect(clientAddress('10.1.2.3', '2001:db8::1', config)).toBe('2001:db8::1');
  });

  it('reads the for= parameters of Forwarded when told to, and not X-Forwarded-For', () => {
    const config = fwd('private');
    expect(clientAddress('10.1.2.3', 'for=6.6.6.6, for=198.51.100.7;proto=https;by=10.0.0.1', config)).toBe(
      '198.51.100.7',
    );
    expect(clientAddress('10.1.2.3', 'For="[2001:db8::1]:4711"', config)).toBe('2001:db8::1');
    expect(clientAddress('10.1.2.3', 'for=unknown', config)).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3', 'for=_hidden, for=198.51.100.7', config)).toBe('198.51.100.7');
  });

  it('bounds the walk, however long the header', () => {
    const header = Array.from({ length: 5000 }, (_, i) => `10.0.${i % 250}.1`).join(',');
    expect(clientAddress('10.1.2.3', header, xff('private'))).toMatch(/^10\.0\./);
  });
});

describe('clientAddressFrom', () => {
  type Socket = { remoteAddress?: string };
  const resolve = async (
    config: ClientAddressConfig,
    socket: Socket,
    headers: Record<string, string> = {},
  ) => {
    const ctx = { req: { socket, headers }, request: {} as { ip?: string } };
    await clientAddressFrom(config)(ctx as never, async () => {});
    return ctx.request.ip;
  };

  it("gives every request on a connection its peer, read in the standard form, and still walks each one's header", async () => {
    const socket: Socket = { remoteAddress: '::ffff:10.1.2.3' };
    expect(await resolve(xff(''), socket)).toBe('10.1.2.3');
    expect(await resolve(xff(''), socket, { 'x-forwarded-for': '198.51.100.7' })).toBe('10.1.2.3');
    expect(await resolve(xff('private'), socket, { 'x-forwarded-for': '198.51.100.7' })).toBe('198.51.100.7');
    expect(await resolve(xff('private'), socket, { 'x-forwarded-for': '203.0.113.9' })).toBe('203.0.113.9');
    expect(await resolve(xff('private'), socket)).toBe('10.1.2.3');
    expect(await resolve(xff(''), { remoteAddress: '2001:db8::1' })).toBe('2001:db8::1');
  });

  it('leaves a socket that lost its address unremembered', async () => {
    const socket: Socket = {};
    expect(await resolve(xff(''), socket)).toBe('');
    socket.remoteAddress = '198.51.100.7';
    expect(await resolve(xff(''), socket)).toBe('198.51.100.7');
  });
});

describe('loadClientAddressConfig', () => {
  it('refuses TRUST_PROXY=true with a sentence that names its replacement', () => {
    expect(() => loadClientAddressConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUSTED_PROXIES/);
    expect(loadClientAddressConfig({ TRUST_PROXY: 'false' }).trustedProxies).toEqual({ kind: 'none' });
  });

  it('refuses what is not an address, a CIDR or a name', () => {
    expect(() => loadClientAddressConfig({ TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/10\.0\.0\.0\/33/);
    expect(() => loadClientAddressConfig({ TRUSTED_PROXIES: 'everyone' })).toThrow(/everyone/);
    expect(() => loadClientAddressConfig({ TRUSTED_PROXIES: '0' })).toThrow(/hop count/);
    expect(() => loadClientAddressConfig({ CLIENT_ADDRESS_HEADER: 'x-real-ip' })).toThrow(
      /CLIENT_ADDRESS_HEADER/,
    );
  });
});
