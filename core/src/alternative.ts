import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { AlternativeAnswer } from './challenges/wire.ts';
import { createPuzzle, flatPriceDifficulty, type Puzzle } from './pow/index.ts';
import { MAX_SEALED_LENGTH, openJson, sealJson } from './sealed.ts';

/**
 * The accessible alternative to an image challenge (docs/accessibility.md): a longer
 * proof-of-work instead of the picture, for people who cannot see it. What the main API
 * (api/src/challenges/alternative.ts) and a standby's `bypass.` host (standby/src/offline-alternative.ts)
 * share, so that an outage neither lifts its limits nor lowers its price.
 */

/** Alternatives one client address may take in an hour (over every app of a deployment, or of a standby). */
export const ALTERNATIVES_PER_IP_PER_HOUR = 6;
/** The shortest time a ticket stays redeemable (ticketLifetime): a slow phone may need several times the expected solve time. */
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
export function alternativeSeconds(tier: string, n: number, base: number): number {
  return base * (tier === 'hard' ? 2 : 1) * 2 ** Math.max(0, n - 2);
}

/** A puzzle costing `seconds` of one browser core on average, at the flat price's sub-puzzle count. */
export function alternativePuzzle(seconds: number): Puzzle {
  return createPuzzle(flatPriceDifficulty(seconds));
}

/**
 * How long a ticket priced `seconds` stays redeemable: at least TICKET_TTL_SECONDS, and four times its expected
 * solve time, so that a late alternative of an hour (640 s expected at the hard tier) still fits a slow device.
 */
export function ticketLifetime(seconds: number): number {
  return Math.max(TICKET_TTL_SECONDS, Math.ceil(4 * seconds));
}

/** The hour an address's alternatives are counted in, and the seconds until it ends (for Retry-After). */
export function alternativeHour(now = Date.now()): { hour: number; retryAfter: number } {
  const seconds = Math.floor(now / 1000);
  return { hour: Math.floor(seconds / 3600), retryAfter: 3600 - (seconds % 3600) };
}

export const alternativeBody = z.object({
  app_key: z.string().min(1).max(128),
  challenge_id: z.string().min(1).max(64),
  challenge: z.string().min(1).max(MAX_SEALED_LENGTH),
});
export type AlternativeBody = z.infer<typeof alternativeBody>;

/** The answer's wire type (challenges/wire.ts); its ticket is submitted back as `answer.alternative`. */
export type AlternativeResult = AlternativeAnswer;

const ticketSchema = z.object({ v: z.literal(1), id: z.string(), exp: z.number().int(), pow: z.unknown() });
export type Ticket = z.infer<typeof ticketSchema>;

/**
 * A ticket for challenge `id` carrying `pow` (a puzzle priced `seconds`), sealed with `key`: a key of its own,
 * so that a ticket never opens as a challenge, nor a challenge as a ticket.
 */
export function issueTicket(
  key: Buffer | KeyObject,
  appId: string,
  id: string,
  seconds: number,
  pow: Puzzle = alternativePuzzle(seconds),
): AlternativeResult {
  const lifetime = ticketLifetime(seconds);
  const exp = Math.floor(Date.now() / 1000) + lifetime;
  return {
    ticket: sealJson(key, { v: 1, id, exp, pow } satisfies Ticket, appId),
    pow,
    seconds,
    expires_in: lifetime,
  };
}

/** The ticket, or null when it was altered, forged, sealed for another app or another challenge. */
export function openTicket(
  key: Buffer | KeyObject,
  appId: string,
  challengeId: string,
  sealed: unknown,
): Ticket | null {
  if (typeof sealed !== 'string') return null;
  const parsed = ticketSchema.safeParse(openJson(key, sealed, appId));
  return parsed.success && parsed.data.id === challengeId ? parsed.data : null;
}
