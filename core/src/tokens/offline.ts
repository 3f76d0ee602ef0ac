import { z } from 'zod';
import { deriveKey, type MacKey, macKey } from '../crypto.ts';
import { openToken, sealToken } from './codec.ts';

/**
 * `offline_` tokens: minted by the standby's end-user side while the main API is down, validated by the
 * standby's server side and, after recovery, by the main API. Both hold only the offline key (derived
 * from the master key with purpose `offline-token`), never the master key, so a standby host that is
 * compromised cannot mint `pt_`, `sct_` or `dg_` tokens.
 */
export const OFFLINE_PREFIX = 'offline_';

/** Short: offline tokens exist to carry one user through an outage, not to be stored. */
export const OFFLINE_TOKEN_TTL_SECONDS = 300;

/** Clocks of the standby hosts and the main API may disagree by this much (docs/decisions.md). */
export const CLOCK_SKEW_SECONDS = 30;

export const offlineTokenPayload = z.object({
  id: z.string().min(1).max(64),
  app: z.string().min(1).max(64),
  act: z.string().max(64),
  iat: z.number().int().nonnegative(),
  exp: z.number().int().nonnegative(),
  ip: z.string().max(64),
  plat: z.string().max(32),
  ref: z.string().max(2048).nullable(),
  score: z.number().int().min(0).max(100),
});
export type OfflineTokenPayload = z.infer<typeof offlineTokenPayload>;

/** The offline key's uses: sealing tokens and (derived again) sealing the standby's own challenges. */
export class OfflineKeys {
  readonly #token: MacKey;
  readonly challenge: Buffer;

  constructor(offlineKey: Buffer) {
    if (offlineKey.length < 32) throw new Error('The offline key must be at least 32 bytes.');
    this.#token = macKey(deriveKey(offlineKey, 'offline-token-mac'));
    this.challenge = deriveKey(offlineKey, 'offline-challenge');
  }

  seal(payload: OfflineTokenPayload): string {
    return sealToken(OFFLINE_PREFIX, this.#token, payload);
  }

  /** The payload of a genuine token, or null; expiry is the caller's check (see `offlineTokenState`). */
  open(token: string): OfflineTokenPayload | null {
    return openToken(OFFLINE_PREFIX, this.#token, token, offlineTokenPayload);
  }
}

/** Whether a genuine token is usable now, allowing CLOCK_SKEW_SECONDS between the minting and checking hosts. */
export function offlineTokenState(
  payload: OfflineTokenPayload,
  nowMs = Date.now(),
): 'ok' | 'expired' | 'not_yet_valid' {
  const now = Math.floor(nowMs / 1000);
  if (payload.iat > now + CLOCK_SKEW_SECONDS) return 'not_yet_valid';
  if (payload.exp + CLOCK_SKEW_SECONDS <= now) return 'expired';
  return 'ok';
}
