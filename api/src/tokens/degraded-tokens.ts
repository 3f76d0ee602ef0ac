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
  /** Always false: an expired `dg_` is the `token_expired` error, never this verdict. */
  expired: false;
}

/**
 * A `dg_` token is never valid; validation only says whether it is genuine (signed with this app's key)
 * and fresh. A forged one, or another app's, is `token_not_found`; one past its 5 minutes is the
 * `token_expired` error, never a code-0 answer: integrations following the origin service's SDK docs
 * allow `valid || degraded` and never read `expired`, so a harvested `dg_` would pass forever.
 */
export function validateDegradedToken(
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  token: string,
  now = Date.now(),
) {
  const payload = keys.openDegraded(app.id, token);
  if (!payload) throw new GatehouseError('token_not_found');
  if (payload.exp * 1000 <= now) throw new GatehouseError('token_expired');
  const verdict: DegradedVerdict = {
    valid: false,
    degraded: true,
    reason: 'quota_exhausted',
    expired: false,
  };
  return verdict;
}
