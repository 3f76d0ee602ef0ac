import { GatehouseError } from './errors.ts';
import { applyClientIpPolicy, type IpComparison } from './ip.ts';
import type { ConsumptionStore } from './offline-consumption.ts';
import type { OfflineTrust } from './offline-trust.ts';
import { type KeyLookup, keyAccepts, offlineKeysFor } from './standby-keys.ts';
import type { CaptchaArgs } from './tokens/index.ts';
import {
  CLOCK_SKEW_SECONDS,
  claimedKid,
  LEGACY_OFFLINE_REASONS,
  type OfflineTokenPayload,
  offlineTokenState,
} from './tokens/offline.ts';

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

/** What checking an `offline_` token needs: the keyring, the outage log and revocations, single use. */
export interface OfflineChecker {
  keys: KeyLookup;
  trust: OfflineTrust;
  store: ConsumptionStore;
  /**
   * Told when a token signed with a real standby key is refused for what it claims (a lifetime over the
   * cap, no recorded outage) or for its key's state: someone holds that key, or a revoked standby keeps
   * minting. For a metric and a log line, never the token.
   */
  onGenuineRefused?: (refusal: { kid: string; region: string; reason: GenuineRefusal }) => void;
}

export type GenuineRefusal = 'lifetime_over_cap' | 'key_revoked_or_retired' | 'no_recorded_outage';

/**
 * Whether a token is a genuine `offline_` token that a standby could have minted, without consuming it:
 * 1. the key it names exists and its MAC checks out (nothing else is read for a forgery), 2. it is this
 * app's (when an app is given), 3. its lifetime is within the cap, it has not expired, 4. its key is
 * neither revoked nor retired before its `iat`, 5. its `iat` falls inside an outage its key's region
 * recorded. Any failure is a GatehouseError (token_expired for an expired one, else token_not_found).
 */
export async function checkOfflineToken(
  checker: Pick<OfflineChecker, 'keys' | 'trust' | 'onGenuineRefused'>,
  token: string,
  appId?: string,
): Promise<OfflineTokenPayload> {
  const kid = claimedKid(token);
  const entry = kid ? await checker.keys.find(kid) : undefined;
  const payload = entry ? offlineKeysFor(entry).open(token) : null;
  if (!entry || !payload || (appId !== undefined && payload.app !== appId)) {
    throw new GatehouseError('token_not_found');
  }
  const refused = (reason: GenuineRefusal) =>
    checker.onGenuineRefused?.({ kid: entry.kid, region: entry.region, reason });
  const state = offlineTokenState(payload);
  if (state === 'too_long') {
    refused('lifetime_over_cap');
    throw new GatehouseError('token_not_found', 'Token not found (lifetime over the offline_ cap).');
  }
  if (state === 'expired') throw new GatehouseError('token_expired');
  if (state === 'not_yet_valid') {
    throw new GatehouseError('token_not_found', 'Token not found (issued in the future).');
  }
  if (!keyAccepts(entry, payload.iat) || (await checker.trust.isRevoked(entry.kid))) {
    refused('key_revoked_or_retired');
    throw new GatehouseError('token_not_found', 'Token not found (its standby key is revoked or retired).');
  }
  if (!(await checker.trust.outageCovers(entry.region, payload.iat * 1000))) {
    refused('no_recorded_outage');
    throw new GatehouseError('token_not_found', 'Token not found (not minted during a recorded outage).');
  }
  return payload;
}

/**
 * Validates an `offline_` token for an app, on a fallback host or on the main API: `checkOfflineToken`,
 * then consumed once in the shared store (a same-key retry gets the same verdict), then the client IP
 * policy. The store failing is an error: validation fails closed.
 */
export async function validateOfflineToken(
  checker: OfflineChecker,
  app: { id: string; clientIpPolicy: string },
  token: string,
  options: { clientIp?: string | undefined; idempotencyKey?: string | undefined } = {},
): Promise<OfflineVerdict> {
  const payload = await checkOfflineToken(checker, token, app.id);
  const ttl = payload.exp - Math.floor(Date.now() / 1000) + 2 * CLOCK_SKEW_SECONDS;
  const result = await checker.store.consumeOnce(`token:${payload.id}`, ttl, options.idempotencyKey);
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
      // How the standby served it (tier, kind, keyboard, alternative); /v1/validate answers it as `risk`.
      risk_reasons: [...(payload.rsn ?? LEGACY_OFFLINE_REASONS)],
    },
    offline: true,
  };
  return applyClientIpPolicy(verdict, payload.ip, options.clientIp, app.clientIpPolicy);
}
