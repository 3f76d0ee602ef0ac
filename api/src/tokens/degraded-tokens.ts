import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { DEGRADED_TOKEN_TTL_SECONDS, type TokenKeys } from '@gatehouse/core/tokens';

/** Mints a `dg_` token for an app whose quota is exhausted. Writes nothing and costs no quota. */
export function mintDegradedToken(
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  action: string,
  now = Date.now(),
): string {
  const iat = Math.floor(now / 1000);
  return keys.sealDegraded(app.id, { act: action, iat, exp: iat + DEGRADED_TOKEN_TTL_SECONDS });
}

export interface DegradedVerdict {
  valid: false;
  degraded: true;
  reason: 'quota_exhausted';
  expired: boolean;
}

/**
 * A `dg_` token is never valid; validation only says whether it is genuine (signed with this app's key)
 * and fresh. A forged one, or another app's, is `token_not_found`.
 */
export function validateDegradedToken(
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  token: string,
  now = Date.now(),
) {
  const payload = keys.openDegraded(app.id, token);
  if (!payload) throw new GatehouseError('token_not_found');
  const verdict: DegradedVerdict = {
    valid: false,
    degraded: true,
    reason: 'quota_exhausted',
    expired: payload.exp * 1000 <= now,
  };
  return verdict;
}
