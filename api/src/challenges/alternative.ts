import { createSecretKey, type KeyObject } from 'node:crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import { MAX_SEALED_LENGTH, openJson, sealJson } from '@gatehouse/core/sealed';
import type { TokenKeys } from '@gatehouse/core/tokens';
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { attemptState, takeAttempt } from './attempts.ts';
import { maxAttempts } from './kinds.ts';
import { powForSeconds } from './priced-pow.ts';
import { openChallenge, type SealedChallenge } from './sealed-challenge.ts';

/**
 * The accessible alternative to an image challenge (issue 15 item 4; docs/accessibility.md): a longer
 * proof-of-work instead of the picture, for people who cannot see it. It replaces only the image: a hard
 * tier's own proof-of-work is still due. Priced and limited so that it is no cheaper for a bot than the image.
 */

/** Alternatives one client address may take in an hour, over every app of this deployment. */
export const ALTERNATIVES_PER_IP_PER_HOUR = 6;
/** How long a ticket stays redeemable: a slow phone may need several times the expected solve time. */
export const TICKET_TTL_SECONDS = 600;

const settingsEnv = z.object({
  /** Expected browser seconds of the first alternatives of an hour at the image tier (the hard tier pays twice). */
  ALTERNATIVE_POW_SECONDS: z.coerce.number().min(0.05).max(600).default(20),
});

/** ALTERNATIVE_POW_SECONDS, read and checked (tests lower it; an operator may raise it). */
export function alternativeSettings(env: NodeJS.ProcessEnv = process.env): { baseSeconds: number } {
  const parsed = settingsEnv.safeParse(env);
  if (!parsed.success)
    throw new Error(`Invalid configuration: ALTERNATIVE_POW_SECONDS: ${parsed.error.issues[0]?.message}`);
  return { baseSeconds: parsed.data.ALTERNATIVE_POW_SECONDS };
}

/**
 * The price of the `n`th alternative of an address this hour: the base for the first two, then doubling
 * (a person rarely needs more than two in an hour; a farm needs thousands), twice that at the hard tier.
 */
export function alternativeSeconds(tier: SealedChallenge['tier'], n: number, base: number): number {
  return base * (tier === 'hard' ? 2 : 1) * 2 ** Math.max(0, n - 2);
}

export const alternativeBody = z.object({
  app_key: z.string().min(1).max(128),
  challenge_id: z.string().min(1).max(64),
  challenge: z.string().min(1).max(MAX_SEALED_LENGTH),
});
export type AlternativeBody = z.infer<typeof alternativeBody>;

export interface AlternativeResult {
  /** Sealed; submitted back as `answer.alternative` with `answer.pow`, the solution of `pow`. */
  ticket: string;
  pow: unknown;
  /** Expected seconds of one browser core, for the progress the widget announces. */
  seconds: number;
  expires_in: number;
}

const ticketSchema = z.object({ v: z.literal(1), id: z.string(), exp: z.number().int(), pow: z.unknown() });
export type Ticket = z.infer<typeof ticketSchema>;

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
  if (typeof sealed !== 'string') return null;
  const parsed = ticketSchema.safeParse(openJson(ticketKey(keys), sealed, appId));
  return parsed.success && parsed.data.id === challengeId ? parsed.data : null;
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
  const n = await deps.alternatives.take(ip);
  if (n > ALTERNATIVES_PER_IP_PER_HOUR) {
    throw new GatehouseError(
      'rate_limited',
      'Too many alternatives from this address. Try again within the hour.',
      { 'Retry-After': String(3600 - (Math.floor(Date.now() / 1000) % 3600)) },
    );
  }
  const seconds = alternativeSeconds(challenge.tier, n, alternativeSettings().baseSeconds);
  const pow = powForSeconds(seconds);
  const exp = Math.floor(Date.now() / 1000) + TICKET_TTL_SECONDS;
  deps.metrics.challenges.inc({ tier: 'alternative' });
  return {
    ticket: sealJson(ticketKey(deps.keys), { v: 1, id: challenge.id, exp, pow } satisfies Ticket, app.id),
    pow,
    seconds,
    expires_in: TICKET_TTL_SECONDS,
  };
}
