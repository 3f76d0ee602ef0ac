import { createSecretKey, type KeyObject } from 'node:crypto';
import {
  ALTERNATIVES_PER_IP_PER_HOUR,
  type AlternativeBody,
  type AlternativeResult,
  alternativeHour,
  alternativeSeconds,
  alternativeSettings,
  issueTicket,
  openTicket as openSealedTicket,
  type Ticket,
} from '@gatehouse/core/alternative';
import { GatehouseError } from '@gatehouse/core/errors';
import { clientKey } from '@gatehouse/core/ip';
import type { TokenKeys } from '@gatehouse/core/tokens';
import type { Deps } from '../deps.ts';
import { attemptState, takeAttempt } from './attempts.ts';
import { maxAttempts } from './kinds.ts';
import { powForSeconds } from './priced-pow.ts';
import { openChallenge } from './sealed-challenge.ts';

/**
 * The accessible alternative to an image challenge on the main API (docs/accessibility.md):
 * a longer proof-of-work instead of the picture, for people who cannot see it. It replaces only the image: a
 * hard tier's own proof-of-work is still due. Priced and limited so that it is no cheaper for a bot than the
 * image; the limits and prices are core's (core/src/alternative.ts), shared with the standby.
 */
export {
  ALTERNATIVES_PER_IP_PER_HOUR,
  type AlternativeBody,
  type AlternativeResult,
  alternativeBody,
  alternativeSeconds,
  alternativeSettings,
  TICKET_TTL_SECONDS,
  type Ticket,
} from '@gatehouse/core/alternative';

const keyObjects = new WeakMap<TokenKeys, KeyObject>();
/** Its own derived key: a ticket never opens as a challenge, nor a challenge as a ticket. */
function ticketKey(keys: TokenKeys): KeyObject {
  let found = keyObjects.get(keys);
  if (!found) {
    found = createSecretKey(keys.derive('challenge-alternative'));
    keyObjects.set(keys, found);
  }
  return found;
}

/** The ticket, or null when it was altered, forged, sealed for another app or another challenge. */
export function openTicket(
  keys: TokenKeys,
  appId: string,
  challengeId: string,
  sealed: unknown,
): Ticket | null {
  return openSealedTicket(ticketKey(keys), appId, challengeId, sealed);
}

/**
 * POST /v1/challenge/alternative: 1. the app, enabled, 2. the sealed challenge (forged, altered or another
 * app's: not found), an image challenge, 3. unexpired, 4. still open (solved: not found; no attempts left:
 * expired), 5. one alternative per challenge, 6. counted per address and hour (over the limit: rate limited),
 * 7. priced by tier and by the address's count, sealed into a ticket.
 */
export async function requestAlternative(
  deps: Deps,
  body: AlternativeBody,
  ip: string,
): Promise<AlternativeResult> {
  const app = await deps.apps.findByKey(body.app_key);
  if (!app) throw new GatehouseError('invalid_app_key');
  if (app.disabledAt) throw new GatehouseError('app_disabled');
  const challenge = openChallenge(deps.keys, app.id, body.challenge);
  if (!challenge || challenge.id !== body.challenge_id) throw new GatehouseError('challenge_not_found');
  if (!challenge.img) {
    throw new GatehouseError('invalid_request', 'This challenge shows no picture: it needs no alternative.');
  }
  if (challenge.exp * 1000 <= Date.now()) throw new GatehouseError('challenge_expired');
  const state = await attemptState(deps.db, challenge.id);
  if (state?.solved) throw new GatehouseError('challenge_not_found', 'This challenge was already solved.');
  if (state && state.attempts >= maxAttempts(challenge)) {
    throw new GatehouseError('challenge_expired', 'Too many wrong answers: start a new challenge.');
  }
  const once = await takeAttempt(deps.db, { ...challenge, id: `${challenge.id}.alt` }, 1);
  if (!once.ok) {
    throw new GatehouseError('challenge_not_found', 'This challenge already has its alternative.');
  }
  // Per client: an IPv6 client is its /64, or every alternative could come from a new address.
  const n = await deps.alternatives.take(clientKey(ip));
  if (n > ALTERNATIVES_PER_IP_PER_HOUR) {
    throw new GatehouseError(
      'rate_limited',
      'Too many alternatives from this address. Try again within the hour.',
      { 'Retry-After': String(alternativeHour().retryAfter) },
    );
  }
  const seconds = alternativeSeconds(challenge.tier, n, alternativeSettings().baseSeconds);
  deps.metrics.challenges.inc({ tier: 'alternative' });
  return issueTicket(ticketKey(deps.keys), app.id, challenge.id, seconds, powForSeconds(seconds));
}
