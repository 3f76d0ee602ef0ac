import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashSecret, newAppKey, newAppSecret, verifyAppSecret } from './secrets.ts';

const now = new Date('2030-06-01T12:00:00Z');
const current = newAppSecret();
const previous = newAppSecret();
const app = (previousSecretExpiresAt: Date | null, previousSecretHash: string | null = previous.hash) => ({
  secretHash: current.hash,
  previousSecretHash,
  previousSecretExpiresAt,
});

describe('app keys and secrets', () => {
  it('makes distinct, prefixed keys and 256-bit secrets', () => {
    expect(newAppKey()).toMatch(/^ak_[A-Za-z0-9_-]{22}$/);
    expect(newAppKey()).not.toBe(newAppKey());
    expect(current.secret).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(current.secret).not.toBe(previous.secret);
  });

  it('stores only the SHA-256 of a secret', () => {
    const expected = createHash('sha256').update(current.secret).digest('hex');
    expect(current.hash).toBe(expected);
    expect(hashSecret(current.secret)).toBe(expected);
    expect(current.hash).not.toContain(current.secret.slice(3));
  });
});

describe('verifyAppSecret', () => {
  it('accepts the current secret, with or without a rotation under way', () => {
    expect(verifyAppSecret(app(null, null), current.secret, now)).toBe(true);
    expect(verifyAppSecret(app(new Date(now.getTime() + 60_000)), current.secret, now)).toBe(true);
    expect(verifyAppSecret(app(new Date(now.getTime() - 60_000)), current.secret, now)).toBe(true);
  });

  it('rejects a wrong, empty or near-miss secret', () => {
    const a = app(new Date(now.getTime() + 60_000));
    expect(verifyAppSecret(a, newAppSecret().secret, now)).toBe(false);
    expect(verifyAppSecret(a, '', now)).toBe(false);
    expect(verifyAppSecret(a, `${current.secret}x`, now)).toBe(false);
    expect(verifyAppSecret(a, current.secret.slice(0, -1), now)).toBe(false);
    // The stored hash itself is not a credential.
    expect(verifyAppSecret(a, current.hash, now)).toBe(false);
  });

  it('accepts the previous secret during the grace period only', () => {
    expect(verifyAppSecret(app(new Date(now.getTime() + 1)), previous.secret, now)).toBe(true);
    expect(verifyAppSecret(app(now), previous.secret, now)).toBe(false);
    expect(verifyAppSecret(app(new Date(now.getTime() - 1)), previous.secret, now)).toBe(false);
  });

  it('never accepts a previous secret without an end date, nor when there is none', () => {
    expect(verifyAppSecret(app(null), previous.secret, now)).toBe(false);
    expect(verifyAppSecret(app(new Date(now.getTime() + 60_000), null), previous.secret, now)).toBe(false);
    expect(verifyAppSecret(app(new Date(now.getTime() + 60_000), null), '', now)).toBe(false);
  });
});
