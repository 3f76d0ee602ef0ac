import {
  CHALLENGE_KINDS,
  type ChallengeAnswer,
  type ChallengeKind,
  generateChallenge,
  MAX_ATTEMPTS,
  verifyChallenge,
  viewToJson,
} from '@gatehouse/core/challenges';
import type { OfflineInitAnswer, OfflineSubmitAnswer } from '@gatehouse/core/challenges/wire';
import { randomId } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import {
  createPuzzle,
  difficultyForScore,
  flatPriceDifficulty,
  nativeHasher,
  spotCheckSolutions,
  TEST_MODE_POW,
  wellFormedSolution,
} from '@gatehouse/core/pow';
import { openJson, sealJson } from '@gatehouse/core/sealed';
import { MAX_TOKEN_LENGTH, OFFLINE_TOKEN_TTL_SECONDS, type OfflineKeys } from '@gatehouse/core/tokens';
import { z } from 'zod';
import { DEFAULT_KEYBOARD_POW_SECONDS } from './config.ts';
import { answerTicket } from './offline-tickets.ts';
import type { SnapshotApp } from './snapshot.ts';

/**
 * Offline verification on the `bypass.` hosts: a real check, not a rubber stamp. Every user solves a
 * proof-of-work and the main API's image challenge, drawn locally (test-mode apps: a one-hash puzzle only):
 * click or select by default, the slide only for an app whose policy names it (its `image_kinds`, in the
 * snapshot), checked by core's verifyChallenge for its kind, one answer per picture, a keyboard answer with
 * its own proof-of-work, the accessible alternative instead of the picture (offline-alternative.ts). The
 * challenge is sealed with a key derived from the region's signing key, attempts and the single solve are
 * recorded in the shared store, and a solve yields a signed, short-lived `offline_` token bound to app and
 * action that says how it was earned (`rsn`: `standby`, the tier, the kind, keyboard or alternative).
 */
export const CHALLENGE_TTL_SECONDS = 120;
/** The standby has no risk history: every request pays the work of a moderately risky one. */
const STANDBY_SCORE = 40;
/** Every standby challenge is of the hard tier (a picture and a proof-of-work): the alternative's price follows it. */
export const STANDBY_TIER = 'hard';
/**
 * What an app whose snapshot names no kinds (or none this standby knows) is served: the main API's defaults
 * (api/src/risk/policy.ts DEFAULT_IMAGE_KINDS; a test holds them equal). Not the slide: a short hole finder
 * passes it most of the time (docs/decisions.md), and an outage must not be the cheap way in.
 */
export const STANDBY_DEFAULT_KINDS: readonly ChallengeKind[] = ['click', 'select'];
const hasher = nativeHasher();

/** The kinds an app is served offline: those its snapshot names that this standby draws, else the defaults. */
export function offlineImageKinds(app: Pick<SnapshotApp, 'image_kinds'>): readonly ChallengeKind[] {
  const named = (app.image_kinds ?? []).filter((k): k is ChallengeKind =>
    (CHALLENGE_KINDS as readonly string[]).includes(k),
  );
  return named.length > 0 ? [...new Set(named)] : STANDBY_DEFAULT_KINDS;
}

function pickKind(kinds: readonly ChallengeKind[]): ChallengeKind {
  const bytes = new Uint8Array(1);
  crypto.getRandomValues(bytes);
  return kinds[bytes[0]! % kinds.length]!;
}

const sealed = z.object({
  id: z.string(),
  app: z.string(),
  act: z.string(),
  ip: z.string(),
  plat: z.string(),
  ref: z.string().nullable(),
  exp: z.number().int(),
  pow: z.unknown(),
  /** The image's kind; absent from challenges sealed before the standby served more than its slide. */
  kind: z.enum(['slide', 'click', 'select']).optional(),
  /** The image's answer (trusted: only this region's key sealed it). */
  img: z.unknown().optional(),
  /** The keyboard path's proof-of-work, due beside an answer made with the keyboard. */
  kpow: z.unknown().optional(),
  /** The page's `cdata` (Turnstile's), minted into the token for siteverify to echo. */
  cd: z.string().optional(),
});

export async function startOfflineChallenge(
  keys: Pick<OfflineKeys, 'challenge'>,
  app: SnapshotApp,
  input: { action: string; ip: string; platform: string; referer: string | null; cdata?: string | undefined },
  keyboardSeconds = DEFAULT_KEYBOARD_POW_SECONDS,
): Promise<OfflineInitAnswer> {
  const id = `ch_${randomId(12)}`;
  const exp = Math.floor(Date.now() / 1000) + CHALLENGE_TTL_SECONDS;
  const puzzle = createPuzzle(app.test_mode ? TEST_MODE_POW : difficultyForScore(STANDBY_SCORE));
  const kind = app.test_mode ? undefined : pickKind(offlineImageKinds(app));
  // As the main API draws them (api/src/challenges/kinds.ts), inline: a standby serves only during an outage.
  const image = kind ? await generateChallenge(kind) : undefined;
  // An image answered with the keyboard must carry this puzzle's solution (docs/accessibility.md).
  const kpow = image ? createPuzzle(flatPriceDifficulty(keyboardSeconds)) : undefined;
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
      ...(input.cdata ? { cd: input.cdata } : {}),
      ...(image ? { kind: image.kind, img: image.answer, kpow } : {}),
    },
    app.id,
  );
  return {
    mode: 'challenge',
    offline: true,
    challenge_id: id,
    challenge,
    tier: app.test_mode ? 'invisible' : 'hard',
    expires_in: CHALLENGE_TTL_SECONDS,
    pow: puzzle,
    // The accessible alternative is offered here too (offline-alternative.ts, docs/accessibility.md).
    ...(image
      ? {
          image: {
            kind: image.kind,
            view: viewToJson(image.view),
            alternative: true,
            keyboard_pow: kpow,
          },
        }
      : {}),
  };
}

/**
 * Checks a submission as the main API does (api/src/challenges/submit.ts): 1. open the sealed challenge,
 * 2. expiry (the alternative's ticket's, when the answer carries one), 3. count the attempt in the shared
 * store (one per picture), 4. the checks without a hash (the proofs' shape, the image answer for its kind),
 * then one sub-puzzle among all the proofs, 5. mark the challenge solved once, 6. mint the `offline_` token,
 * with the reasons that say how it was earned.
 */
export async function submitOfflineChallenge(
  keys: { mint: () => Promise<OfflineKeys>; challenge: Buffer[] },
  store: ConsumptionStore,
  app: SnapshotApp,
  body: { challenge_id: string; challenge: string; pow?: unknown; answer?: unknown },
): Promise<OfflineSubmitAnswer> {
  const c = openOfflineChallenge(keys.challenge, app, body);
  const kind: ChallengeKind | undefined = c.img === undefined ? undefined : (c.kind ?? 'slide');
  const answer = (typeof body.answer === 'object' && body.answer) || {};
  // The accessible alternative's ticket, when the answer carries one: its proof stands for the picture.
  const ticket = kind === undefined ? undefined : answerTicket(keys.challenge, app.id, c.id, answer);
  const exp = ticket?.exp ?? c.exp;
  if (exp * 1000 <= Date.now()) throw new GatehouseError('challenge_expired');
  // The marks outlive whatever may still be redeemed (a ticket outlives its challenge): never a second solve.
  const ttl = Math.max(CHALLENGE_TTL_SECONDS, exp - Math.floor(Date.now() / 1000)) * 2;
  // Before anything is spent: a standby whose key was revoked mints nothing until its next snapshot.
  const minter = await keys.mint();
  const limit = kind ? MAX_ATTEMPTS[kind] : 3;
  const attempt = await store.countAttempt(`challenge:${c.id}`, ttl);
  if (attempt > limit)
    throw new GatehouseError('challenge_expired', 'Too many wrong answers: start a new challenge.');

  // As on the main API (docs/pow.md, "No pass without the work"): the shapes first, without a hash; the
  // image answer, without a hash; then every sub-puzzle of every proof, hashed against its claimed prefix.
  // A challenge gets one check ever (the `pow:` mark), taken by its first well-formed submit with a right
  // answer or by a malformed one, so a refused proof-of-work burns the challenge and skipping sub-puzzles
  // saves no work per success. The extra proof in the answer: the alternative's ticket's instead of the
  // picture, or the keyboard's beside it (a keyboard answer without it is refused and spends the challenge).
  const keyboard = !ticket && c.kpow !== undefined && 'input' in answer && answer.input === 'keyboard';
  // Click and select answers are lists; made with the keyboard they come as `{input, picks, pow}`.
  const picks = keyboard && kind !== 'slide' && 'picks' in answer ? answer.picks : undefined;
  const extra = ticket ? ticket.pow : keyboard ? c.kpow : undefined;
  const extraSolution = extra !== undefined && 'pow' in answer ? answer.pow : undefined;
  const formed =
    wellFormedSolution(c.pow, body.pow) !== null &&
    (extra === undefined || wellFormedSolution(extra, extraSolution) !== null);
  const imageOk =
    kind === undefined ||
    ticket !== undefined ||
    verifyChallenge(kind, c.img as ChallengeAnswer, picks ?? body.answer).ok;
  let powOk = formed;
  if (!formed || imageOk) {
    const draw = await store.consumeOnce(`pow:${c.id}`, ttl);
    const pairs = [
      [c.pow, body.pow] as const,
      ...(extra === undefined ? [] : [[extra, extraSolution] as const]),
    ];
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
  const seal = (ref: string | null) =>
    minter.seal({
      id: c.id,
      app: app.id,
      act: c.act,
      iat,
      exp: iat + OFFLINE_TOKEN_TTL_SECONDS,
      ip: c.ip,
      plat: c.plat,
      ref,
      score: STANDBY_SCORE,
      rsn: offlineReasons(kind, { keyboard, alternative: ticket !== undefined }),
      ...(c.cd ? { cd: c.cd } : {}),
    });
  // The referer travels in the token, and no checker reads one over MAX_TOKEN_LENGTH: a page address too
  // long for it (a long path, or the Referer header's query) is cut to its origin, rather than minting a
  // token nobody accepts.
  let token = seal(c.ref);
  if (token.length > MAX_TOKEN_LENGTH) token = seal(originOf(c.ref));
  return { pass_token: token, challenge_id: c.id, expires_in: OFFLINE_TOKEN_TTL_SECONDS };
}

/** A page address's origin (`https://shop.example`), or null when it is not a URL with one. */
function originOf(ref: string | null): string | null {
  if (ref === null) return null;
  try {
    const origin = new URL(ref).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * How an `offline_` token was earned, for the integrator (/v1/validate's `risk.reasons`, /api/validate's
 * `captcha_args.risk_reasons`): always `standby`; the tier (`tier.hard` with a picture, `tier.invisible`
 * for a test-mode app's proof-of-work alone); the picture's kind; and, as on the main API,
 * `challenge.keyboard` or `challenge.alternative` for how the picture was answered.
 */
export function offlineReasons(
  kind: ChallengeKind | undefined,
  how: { keyboard: boolean; alternative: boolean },
): string[] {
  return [
    'standby',
    kind === undefined ? 'tier.invisible' : `tier.${STANDBY_TIER}`,
    ...(kind ? [`challenge.${kind}`] : []),
    ...(how.keyboard ? ['challenge.keyboard'] : []),
    ...(how.alternative ? ['challenge.alternative'] : []),
  ];
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
