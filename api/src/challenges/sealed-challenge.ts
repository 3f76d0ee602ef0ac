import { createSecretKey, type KeyObject } from 'node:crypto';
import { openJson, sealJson } from '@gatehouse/core/sealed';
import type { TokenKeys } from '@gatehouse/core/tokens';
import { z } from 'zod';

/** How long a challenge may take from initialization to submission. */
export const CHALLENGE_TTL_SECONDS = 120;

/**
 * Everything the server needs to judge a submission, sealed (AES-256-GCM) into the challenge the client
 * holds: initialization writes nothing to the database, and the client can neither read the answer nor
 * change its tier, score or expiry. The app id is the associated data, so one app's challenge never opens
 * for another.
 */
export const sealedChallenge = z.object({
  v: z.literal(1),
  id: z.string(),
  app: z.string(),
  act: z.string(),
  tier: z.enum(['invisible', 'image', 'hard']),
  /** Facts recorded at initialization, echoed as captcha_args. */
  ip: z.string(),
  plat: z.string(),
  ref: z.string().nullable(),
  pkg: z.string().nullable(),
  uid: z.string().nullable(),
  score: z.number().int().min(0).max(100),
  /** The risk engine's reasons for the score, kept with the pass token for the integrator. */
  rsn: z.array(z.string().max(64)).max(32).optional(),
  exp: z.number().int(),
  pow: z.unknown().optional(),
  img: z.object({ kind: z.enum(['slide', 'click', 'select']), answer: z.unknown() }).optional(),
  /** The puzzle a slide answer made with the keyboard must carry a solution of. */
  kpow: z.unknown().optional(),
  cdata: z.string().optional(),
});
export type SealedChallenge = z.infer<typeof sealedChallenge>;

const keyObjects = new WeakMap<TokenKeys, KeyObject>();

/** Derived once per key set and kept as a KeyObject: deriving and importing it is too dear to repeat per request. */
function key(keys: TokenKeys): KeyObject {
  let found = keyObjects.get(keys);
  if (!found) {
    found = createSecretKey(keys.derive('challenge'));
    keyObjects.set(keys, found);
  }
  return found;
}

export function sealChallenge(keys: TokenKeys, challenge: SealedChallenge): string {
  return sealJson(key(keys), challenge, challenge.app);
}

/** The challenge, or null when it was altered, forged, or sealed for another app. */
export function openChallenge(keys: TokenKeys, appId: string, sealed: string): SealedChallenge | null {
  const parsed = sealedChallenge.safeParse(openJson(key(keys), sealed, appId));
  return parsed.success && parsed.data.app === appId ? parsed.data : null;
}
