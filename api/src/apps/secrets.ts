import { constantTimeEqual, randomId, sha256Hex } from '@gatehouse/core/crypto';
import type { App } from '@gatehouse/core/db/schema';

/** A new public app key. */
export function newAppKey(): string {
  return `ak_${randomId(16)}`;
}

/** A new app secret: 256 random bits, shown once and stored only as a hash. */
export function newAppSecret(): { secret: string; hash: string } {
  const secret = `sk_${randomId(32)}`;
  return { secret, hash: hashSecret(secret) };
}

/** Secrets are 256-bit random values, so one SHA-256 is enough: there is nothing to brute-force. */
export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/**
 * Checks a presented secret against the current one and, during a rotation's grace period, the previous
 * one. Both comparisons always run and each is constant-time, so timing says nothing about which matched.
 */
export function verifyAppSecret(
  app: Pick<App, 'secretHash' | 'previousSecretHash' | 'previousSecretExpiresAt'>,
  presented: string,
  now = new Date(),
): boolean {
  const hash = hashSecret(presented);
  const current = constantTimeEqual(hash, app.secretHash);
  const previous = constantTimeEqual(hash, app.previousSecretHash ?? '');
  const inGrace = app.previousSecretExpiresAt !== null && app.previousSecretExpiresAt > now;
  return current || (previous && inGrace);
}
