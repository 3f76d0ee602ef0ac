import { z } from 'zod';
import { deriveKey, type MacKey, macKey } from '../crypto.ts';
import { openToken, sealToken } from './codec.ts';

/**
 * `offline_` tokens: minted by the standby's end-user side while the main API is down, validated by the
 * standby's server side and by the main API. Each standby region holds only its own region keys (a
 * keyring kept by the main API: `core/src/standby-keys.ts`), never the master key, so a standby host that
 * is compromised cannot mint `pt_`, `sct_` or `dg_` tokens, nor `offline_` tokens of another region, and
 * its key can be revoked alone. The key id (`kid`) travels in the payload so the checker knows which key
 * to try; nothing in the payload is trusted before the MAC under that key checks out.
 */
export const OFFLINE_PREFIX = 'offline_';

/** Short: offline tokens exist to carry one user through an outage, not to be stored. */
export const OFFLINE_TOKEN_TTL_SECONDS = 300;

/**
 * The hard cap on `exp - iat` that every checker enforces. We mint exactly OFFLINE_TOKEN_TTL_SECONDS, so a
 * token claiming more was not minted by a standby: it is refused whatever its signature (a stolen key
 * must not buy long-lived tokens). docs/decisions.md ("Offline trust") says why 300 s.
 */
export const OFFLINE_TOKEN_MAX_LIFETIME_SECONDS = 300;

/** Clocks of the standby hosts and the main API may disagree by this much (docs/failover.md). */
export const CLOCK_SKEW_SECONDS = 30;

export const STANDBY_KID = /^[A-Za-z0-9_-]{1,32}$/;

/** One reason in an `offline_` token: short, of the risk engine's alphabet (`area.name`, `name:+10`). */
export const OFFLINE_REASON = /^[a-z0-9_.:+-]{1,40}$/;
/** Few: the token travels in a form field and `claimedKid` reads at most 1024 characters of it. */
export const MAX_OFFLINE_REASONS = 8;
/** Every `offline_` token comes from a standby: what a checker reports for one minted before tokens said more. */
export const LEGACY_OFFLINE_REASONS: readonly string[] = ['standby'];

export const offlineTokenPayload = z.object({
  kid: z.string().regex(STANDBY_KID),
  id: z.string().min(1).max(64),
  app: z.string().min(1).max(64),
  act: z.string().max(64),
  iat: z.number().int().nonnegative(),
  exp: z.number().int().nonnegative(),
  ip: z.string().max(64),
  plat: z.string().max(32),
  ref: z.string().max(2048).nullable(),
  score: z.number().int().min(0).max(100),
  /**
   * How the token was earned, for the integrator (`standby`, `tier.hard`, `challenge.click`,
   * `challenge.keyboard`, `challenge.alternative`): read by every checker as `captcha_args.risk_reasons`.
   * Optional: tokens minted before it existed carry none and still validate (and a checker that predates
   * it ignores it, since unknown keys are dropped, so minting hosts may be upgraded first).
   */
  rsn: z.array(z.string().regex(OFFLINE_REASON)).max(MAX_OFFLINE_REASONS).optional(),
  /** The page's customer data given at render (Turnstile's `cdata`), echoed by siteverify; optional as `rsn`. */
  cd: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,255}$/)
    .optional(),
});
export type OfflineTokenPayload = z.infer<typeof offlineTokenPayload>;

/** One region key's uses: sealing tokens under its id and (derived again) sealing the standby's challenges. */
export class OfflineKeys {
  readonly kid: string;
  readonly #token: MacKey;
  readonly challenge: Buffer;

  constructor(offlineKey: Buffer, kid: string) {
    if (offlineKey.length < 32) throw new Error('The offline key must be at least 32 bytes.');
    if (!STANDBY_KID.test(kid)) throw new Error('A standby key id is 1 to 32 characters of [A-Za-z0-9_-].');
    this.kid = kid;
    this.#token = macKey(deriveKey(offlineKey, 'offline-token-mac'));
    this.challenge = deriveKey(offlineKey, 'offline-challenge');
  }

  seal(payload: Omit<OfflineTokenPayload, 'kid'>): string {
    return sealToken(OFFLINE_PREFIX, this.#token, { kid: this.kid, ...payload });
  }

  /** The payload of a genuine token sealed under this key, or null; expiry is the caller's check. */
  open(token: string): OfflineTokenPayload | null {
    const payload = openToken(OFFLINE_PREFIX, this.#token, token, offlineTokenPayload);
    return payload && payload.kid === this.kid ? payload : null;
  }
}

/**
 * The key id a token claims, read without checking anything (so the checker can pick the key to try).
 * Null for anything not shaped as an `offline_` token with a key id.
 */
export function claimedKid(token: string): string | null {
  if (typeof token !== 'string' || token.length > 1024 || !token.startsWith(OFFLINE_PREFIX)) return null;
  const body = token.slice(OFFLINE_PREFIX.length).split('.')[0] ?? '';
  try {
    const kid = (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    return typeof kid === 'string' && STANDBY_KID.test(kid) ? kid : null;
  } catch {
    return null;
  }
}

/**
 * Whether a genuine token is usable now, allowing CLOCK_SKEW_SECONDS between the minting and checking
 * hosts. A lifetime over the cap is `too_long`: no standby mints one.
 */
export function offlineTokenState(
  payload: OfflineTokenPayload,
  nowMs = Date.now(),
): 'ok' | 'expired' | 'not_yet_valid' | 'too_long' {
  const now = Math.floor(nowMs / 1000);
  if (payload.exp - payload.iat > OFFLINE_TOKEN_MAX_LIFETIME_SECONDS || payload.exp < payload.iat)
    return 'too_long';
  if (payload.iat > now + CLOCK_SKEW_SECONDS) return 'not_yet_valid';
  if (payload.exp + CLOCK_SKEW_SECONDS <= now) return 'expired';
  return 'ok';
}
