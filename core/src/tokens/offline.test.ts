import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CLOCK_SKEW_SECONDS,
  claimedKid,
  OFFLINE_TOKEN_MAX_LIFETIME_SECONDS,
  OfflineKeys,
  offlineTokenState,
} from './offline.ts';

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
  it('round-trip with their region key, carry its id, and are refused under another key or when altered', () => {
    const keys = new OfflineKeys(randomBytes(32), 'k1');
    const token = keys.seal(payload);
    expect(token.startsWith('offline_')).toBe(true);
    expect(keys.open(token)).toEqual({ kid: 'k1', ...payload });
    expect(claimedKid(token)).toBe('k1');
    expect(new OfflineKeys(randomBytes(32), 'k1').open(token)).toBeNull();
    expect(keys.open(token.replace('offline_', 'offline_x'))).toBeNull();
    expect(keys.open(`pt_${token.slice(8)}`)).toBeNull();
    expect(claimedKid('offline_bm90IGpzb24.x')).toBeNull();
  });
  it('a token sealed under one key id never opens as another id under the same bytes', () => {
    const raw = randomBytes(32);
    expect(new OfflineKeys(raw, 'k2').open(new OfflineKeys(raw, 'k1').seal(payload))).toBeNull();
  });
  it(`tolerate ${CLOCK_SKEW_SECONDS} s of clock skew between hosts, and no more`, () => {
    const t = { kid: 'k1', ...payload };
    const at = (s: number) => (now + s) * 1000;
    expect(offlineTokenState(t, at(0))).toBe('ok');
    expect(offlineTokenState(t, at(300 + CLOCK_SKEW_SECONDS - 1))).toBe('ok');
    expect(offlineTokenState(t, at(300 + CLOCK_SKEW_SECONDS))).toBe('expired');
    // The checking host runs behind the minting host.
    expect(offlineTokenState(t, at(-CLOCK_SKEW_SECONDS))).toBe('ok');
    expect(offlineTokenState(t, at(-CLOCK_SKEW_SECONDS - 1))).toBe('not_yet_valid');
  });
  it(`refuse any lifetime over ${OFFLINE_TOKEN_MAX_LIFETIME_SECONDS} s, whatever the clock says`, () => {
    const t = { kid: 'k1', ...payload };
    expect(offlineTokenState({ ...t, exp: now + OFFLINE_TOKEN_MAX_LIFETIME_SECONDS })).toBe('ok');
    expect(offlineTokenState({ ...t, exp: now + OFFLINE_TOKEN_MAX_LIFETIME_SECONDS + 1 })).toBe('too_long');
    expect(offlineTokenState({ ...t, exp: now + 365 * 86_400 })).toBe('too_long');
    expect(offlineTokenState({ ...t, exp: now - 1 })).toBe('too_long');
  });
});
