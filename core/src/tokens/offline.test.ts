import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_SECONDS, OfflineKeys, offlineTokenState } from './offline.ts';

const now = Math.floor(Date.now() / 1000);
const payload = {
  id: 'ch_1',
  app: 'app-1',
  act: 'login',
  iat: now,
  exp: now + 300,
  ip: '203.0.113.1',
  plat: 'web',
  ref: null,
  score: 40,
};

describe('offline tokens', () => {
  it('round-trip with the offline key and are refused under another key or when altered', () => {
    const keys = new OfflineKeys(randomBytes(32));
    const token = keys.seal(payload);
    expect(token.startsWith('offline_')).toBe(true);
    expect(keys.open(token)).toEqual(payload);
    expect(new OfflineKeys(randomBytes(32)).open(token)).toBeNull();
    expect(keys.open(token.replace('offline_', 'offline_x'))).toBeNull();
    expect(keys.open(`pt_${token.slice(8)}`)).toBeNull();
  });
  it(`tolerate ${CLOCK_SKEW_SECONDS} s of clock skew between hosts, and no more`, () => {
    const at = (s: number) => (now + s) * 1000;
    expect(offlineTokenState(payload, at(0))).toBe('ok');
    expect(offlineTokenState(payload, at(300 + CLOCK_SKEW_SECONDS - 1))).toBe('ok');
    expect(offlineTokenState(payload, at(300 + CLOCK_SKEW_SECONDS))).toBe('expired');
    // The checking host runs behind the minting host.
    expect(offlineTokenState(payload, at(-CLOCK_SKEW_SECONDS))).toBe('ok');
    expect(offlineTokenState(payload, at(-CLOCK_SKEW_SECONDS - 1))).toBe('not_yet_valid');
  });
});
