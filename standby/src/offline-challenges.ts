import {
  generateStandbyChallenge,
  MAX_ATTEMPTS,
  verifyChallenge,
  viewToJson,
} from '@gatehouse/core/challenges';
import { randomId } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import {
  createPuzzle,
  difficultyForScore,
  nativeHasher,
  spotCheckSolutions,
  TEST_MODE_POW,
  wellFormedSolution,
} from '@gatehouse/core/pow';
import { openJson, sealJson } from '@gatehouse/core/sealed';
import { OFFLINE_TOKEN_TTL_SECONDS, type OfflineKeys } from '@gatehouse/core/tokens';
import { z } from 'zod';
import { answerTicket } from './offline-tickets.ts';
import type { SnapshotApp } from './snapshot.ts';

/**
 * Offline verification on the `bypass.` hosts: a real check, not a rubber stamp. Every user solves a
 * proof-of-work and a simple slide challenge drawn locally (test-mode apps: a one-hash puzzle only). The
 * challenge is sealed with a key derived from the region's signing key, attempts and the single solve are recorded
 * in the shared store, and a solve yields a signed, short-lived `offline_` token bound to app and action.
 */
export const CHALLENGE_TTL_SECONDS = 120;
/** The standby has no risk history: every request pays the work of a moderately risky one. */
const STANDBY_SCORE = 40;
/** Every standby challenge is of the hard tier (a picture and a proof-of-work): the alternative's price follows it. */
export const STANDBY_TIER = 'hard';
const hasher = nativeHasher();

const sealed = z.object({
  id: z.string(),
  app: z.string(),
  act: z.string(),
  ip: z.string(),
  plat: z.string(),
  ref: z.string().nullable(),
  exp: z.number().int(),
  pow: z.unknown(),
  img: z.unknown().optional(),
});

export async function startOfflineChallenge(
  keys: Pick<OfflineKeys, 'challenge'>,
  app: SnapshotApp,
  input: { action: string; ip: string; platform: string; referer: string | null },
) {
  const id = `ch_${randomId(12)}`;
  const exp = Math.floor(Date.now() / 1000) + CHALLENGE_TTL_SECONDS;
  const puzzle = createPuzzle(app.test_mode ? TEST_MODE_POW : difficultyForScore(STANDBY_SCORE));
  const image = app.test_mode ? undefined : await generateStandbyChallenge();
  const challenge = sealJson(
    keys.challenge,
    {
      id,
      app: app.id,
      act: input.action,
      ip: input.ip,
      plat: input.platform,
      ref: input.referer,
      exp,
      pow: puzzle,
      img: image?.answer,
    },
    app.id,
  );
  return {
    mode: 'challenge' as const,
    offline: true,
    challenge_id: id,
    challenge,
    tier: app.test_mode ? ('invisible' as const) : ('hard' as const),
    expires_in: CHALLENGE_TTL_SECONDS,
    pow: puzzle,
    // The accessible alternative is offered here too (offline-alternative.ts, docs/accessibility.md).
    ...(image ? { image: { kind: 'slide', view: viewToJson(image.view), alternative: true } } : {}),
  };
}

/**
 * Checks a submission: 1. open the sealed challenge, 2. expiry, 3. count the attempt in the shared store,
 * 4. proof-of-work and slide, 5. mark the challenge solved once, 6. mint the `offline_` token.
 */
export async function submitOfflineChallenge(
  keys: { mint: () => Promise<OfflineKeys>; challenge: Buffer[] },
  store: ConsumptionStore,
  app: SnapshotApp,
  body: { challenge_id: string; challenge: string; pow?: unknown; answer?: unknown },
) {
  const c = openOfflineChallenge(keys.challenge, app, body);
  const answer = (typeof body.answer === 'object' && body.answer) || {};
  // The accessible alternative's ticket, when the answer carries one: its proof stands for the picture.
  const ticket = c.img === undefined ? undefined : answerTicket(keys.challenge, app.id, c.id, answer);
  const exp = ticket?.exp ?? c.exp;
  if (exp * 1000 <= Date.now()) throw new GatehouseError('challenge_expired');
  // The marks outlive whatever may still be redeemed (a ticket outlives its challenge): never a second solve.
  const ttl = Math.max(CHALLENGE_TTL_SECONDS, exp - Math.floor(Date.now() / 1000)) * 2;
  // Before anything is spent: a standby whose key was revoked mints nothing until its next snapshot.
  const minter = await keys.mint();
  const limit = c.img ? MAX_ATTEMPTS.slide : 3;
  const attempt = await store.countAttempt(`challenge:${c.id}`, ttl);
  if (attempt > limit)
    throw new GatehouseError('challenge_expired', 'Too many wrong answers: start a new challenge.');

  // As on the main API (docs/pow.md, "Spot-checking one sub-puzzle"): the shape first, without a hash; the
  // slide, without a hash; then ONE sub-puzzle, picked after the submit arrived. A challenge gets one draw
  // ever (the `pow:` mark), taken by its first well-formed submit with a right slide or by a malformed one,
  // so a refused proof-of-work burns the challenge and skipping sub-puzzles saves no work per success.
  // A ticket's proof stands for the picture: its shape is checked like the slide (a malformed one costs an
  // attempt), and its sub-puzzles join the challenge's in the one spot check, so a submit costs one hash.
  const ticketPow = ticket && 'pow' in answer ? answer.pow : undefined;
  const formed = wellFormedSolution(c.pow, body.pow) !== null;
  const imageOk =
    c.img === undefined ||
    (ticket
      ? wellFormedSolution(ticket.pow, ticketPow) !== null
      : verifyChallenge('slide', c.img as never, body.answer).ok);
  let powOk = formed;
  if (!formed || imageOk) {
    const draw = await store.consumeOnce(`pow:${c.id}`, ttl);
    const pairs = [[c.pow, body.pow] as const, ...(ticket ? [[ticket.pow, ticketPow] as const] : [])];
    powOk = formed && draw === 'consumed' && (await spotCheckSolutions(pairs, hasher ? { hasher } : {}));
  }
  if (!powOk || !imageOk) {
    const left = powOk ? limit - attempt : 0;
    throw new GatehouseError(
      'invalid_answer',
      `Invalid answer: ${left} attempt${left === 1 ? '' : 's'} left.`,
    );
  }
  if ((await store.consumeOnce(`challenge:${c.id}`, ttl)) !== 'consumed') {
    throw new GatehouseError('challenge_not_found', 'This challenge was already solved.');
  }
  const iat = Math.floor(Date.now() / 1000);
  const token = minter.seal({
    id: c.id,
    app: app.id,
    act: c.act,
    iat,
    exp: iat + OFFLINE_TOKEN_TTL_SECONDS,
    ip: c.ip,
    plat: c.plat,
    ref: c.ref,
    score: STANDBY_SCORE,
  });
  return { pass_token: token, challenge_id: c.id, expires_in: OFFLINE_TOKEN_TTL_SECONDS };
}

/** The sealed challenge, opened with any of the region's live keys: a rotation between init and submit must not void it. */
export function openOfflineChallenge(
  keys: Buffer[],
  app: SnapshotApp,
  body: { challenge_id: string; challenge: string },
): z.infer<typeof sealed> {
  let opened: unknown = null;
  for (const key of keys) {
    opened = openJson(key, body.challenge, app.id);
    if (opened !== null) break;
  }
  const parsed = sealed.safeParse(opened);
  if (!parsed.success || parsed.data.id !== body.challenge_id || parsed.data.app !== app.id) {
    throw new GatehouseError('challenge_not_found');
  }
  return parsed.data;
}
