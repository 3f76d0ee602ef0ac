import { GatehouseError } from './errors.ts';
import { applyClientIpPolicy, type IpComparison } from './ip.ts';
import type { ConsumptionStore } from './offline-consumption.ts';
import type { CaptchaArgs } from './tokens/index.ts';
import { CLOCK_SKEW_SECONDS, type OfflineKeys, offlineTokenState } from './tokens/offline.ts';

export interface OfflineVerdict {
  valid: boolean;
  challenge_id: string;
  action: string;
  uid: null;
  captcha_args: CaptchaArgs;
  offline: true;
  client_ip_check?: IpComparison;
  reason?: 'client_ip_mismatch';
}

/**
 * Validates an `offline_` token for an app, on a fallback host or on the main API after recovery:
 * 1. MAC and shape (nothing read for a forgery), 2. the token is this app's, 3. lifetime with the clock
 * skew allowance, 4. consumed once in the shared store (a same-key retry gets the same verdict),
 * 5. the client IP policy. The store failing is an error: validation fails closed.
 */
export async function validateOfflineToken(
  keys: OfflineKeys,
  store: ConsumptionStore,
  app: { id: string; clientIpPolicy: string },
  token: string,
  options: { clientIp?: string | undefined; idempotencyKey?: string | undefined } = {},
): Promise<OfflineVerdict> {
  const payload = keys.open(token);
  if (!payload || payload.app !== app.id) throw new GatehouseError('token_not_found');
  const state = offlineTokenState(payload);
  if (state === 'expired') throw new GatehouseError('token_expired');
  if (state === 'not_yet_valid')
    throw new GatehouseError('token_not_found', 'Token not found (issued in the future).');
  const ttl = payload.exp - Math.floor(Date.now() / 1000) + 2 * CLOCK_SKEW_SECONDS;
  const result = await store.consumeOnce(`token:${payload.id}`, ttl, options.idempotencyKey);
  if (result === 'already_used') throw new GatehouseError('token_already_used');

  const verdict: OfflineVerdict = {
    valid: true,
    challenge_id: payload.id,
    action: payload.act,
    uid: null,
    captcha_args: {
      platform: payload.plat,
      user_ip: payload.ip,
      referer: payload.ref,
      pkg: null,
      solved_at: payload.iat,
      risk_score: payload.score,
    },
    offline: true,
  };
  return applyClientIpPolicy(verdict, payload.ip, options.clientIp, app.clientIpPolicy);
}
