import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, macKey } from '../crypto.ts';
import { openToken } from './codec.ts';
import {
  CLOCK_SKEW_SECONDS,
  claimedKid,
  MAX_OFFLINE_REASONS,
  OFFLINE_PREFIX,
  OFFLINE_TOKEN_MAX_LIFETIME_SECONDS,
  OfflineKeys,
  offlineTokenPayload,
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
  it('carry how they were earned (`rsn`); a token without it, as minted before, still opens', () => {
    const keys = new OfflineKeys(randomBytes(32), 'k1');
    const rsn = ['standby', 'tier.hard', 'challenge.click', 'challenge.alternative'];
    expect(keys.open(keys.seal({ ...payload, rsn }))).toEqual({ kid: 'k1', ...payload, rsn });
    const legacy = keys.open(keys.seal(payload));
    expect(legacy).toEqual({ kid: 'k1', ...payload });
    expect(legacy && 'rsn' in legacy).toBe(false);
    // Sealed whatever it says, a malformed list is refused by every checker.
    expect(keys.open(keys.seal({ ...payload, rsn: ['Not A Reason'] }))).toBeNull();
    const many = Array.from({ length: MAX_OFFLINE_REASONS + 1 }, (_, i) => `r${i}`);
    expect(keys.open(keys.seal({ ...payload, rsn: many }))).toBeNull();
  });
  it('a checker that predates `rsn` opens a token that carries it (unknown keys are dropped; the MAC covers them)', () => {
    // An older checker: the same derived MAC key and codec, its schema without `rsn`.
    const raw = randomBytes(32);
    const token = new OfflineKeys(raw, 'k1').seal({ ...payload, rsn: ['standby', 'tier.hard'] });
    const olderKey = macKey(deriveKey(raw, 'offline-token-mac'));
    const olderSchema = offlineTokenPayload.omit({ rsn: true });
    expect(openToken(OFFLINE_PREFIX, olderKey, token, olderSchema)).toEqual({ kid: 'k1', ...payload });
    // The reasons are under the MAC: changing them breaks it.
    const [body, mac] = token.slice(OFFLINE_PREFIX.length).split('.') as [string, string];
    const json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const altered = Buffer.from(JSON.stringify({ ...json, rsn: ['standby'] })).toString('base64url');
    expect(openToken(OFFLINE_PREFIX, olderKey, `${OFFLINE_PREFIX}${altered}.${mac}`, olderSchema)).toBeNull();
  });
});
