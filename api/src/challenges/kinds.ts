import {
  CHALLENGE_KINDS,
  type ChallengeAnswer,
  type ChallengeKind,
  generateChallenge,
  MAX_ATTEMPTS,
  type Verdict,
  verifyChallenge,
  viewToJson,
} from '@gatehouse/core/challenges';
import { pooledRandomBytes } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import {
  createPuzzle,
  difficultyForScore,
  nativeHasher,
  type Puzzle,
  spotCheckSolutions,
  TEST_MODE_POW,
  wellFormedSolution,
} from '@gatehouse/core/pow';
import type { Logger } from 'pino';
import {
  type DrawnImage,
  ImagePool,
  ImageWorkers,
  imagePoolSettings,
  PoolEmpty,
  RENDERS_PER_WORKER,
} from './image-pool.ts';
import type { SealedChallenge } from './sealed-challenge.ts';

/**
 * The one place the API meets the challenge kinds of `@gatehouse/core`: proof-of-work puzzles and image
 * challenges, made at initialization and checked at submission.
 */

/** The hard tier pays at least the work of a score-90 request, whatever its score. */
const HARD_TIER_MIN_SCORE = 90;

const hasher = nativeHasher();

export function makePow(score: number, tier: 'invisible' | 'hard', testMode: boolean): { puzzle: Puzzle } {
  const params = testMode
    ? TEST_MODE_POW
    : difficultyForScore(tier === 'hard' ? Math.max(score, HARD_TIER_MIN_SCORE) : score);
  // The salt from the process's pool of random bytes (one call into the CSPRNG per 4 KiB, as the ids and
  // nonces): a getRandomValues call per puzzle is a cost an invisible init need not pay.
  return { puzzle: createPuzzle(params, pooledRandomBytes) };
}

/** The cheap half of the check (shape, count, ascending nonces): no hash, so a malformed submit costs microseconds. */
export function powWellFormed(sealedPuzzle: unknown, solution: unknown): boolean {
  return wellFormedSolution(sealedPuzzle, solution) !== null;
}

/**
 * Every puzzle the submit carries (the keyboard's or the alternative's beside the challenge's): each
 * sub-puzzle must hash to the prefix the answer claims, one hash each, one for the invisible tier's puzzle
 * (docs/pow.md, "No pass without the work"). The caller burns the challenge when this answers false.
 */
export function spotCheckPow(
  pairs: ReadonlyArray<readonly [sealedPuzzle: unknown, solution: unknown]>,
): Promise<boolean> {
  return spotCheckSolutions(pairs, hasher ? { hasher } : {});
}

export function pickImageKind(kinds: readonly ChallengeKind[]): ChallengeKind {
  const bytes = new Uint8Array(1);
  crypto.getRandomValues(bytes);
  return kinds[bytes[0]! % kinds.length]!;
}

async function drawInline(kind: ChallengeKind): Promise<DrawnImage> {
  const challenge = await generateChallenge(kind);
  return { kind, view: viewToJson(challenge.view), answer: challenge.answer };
}

let pool: ImagePool | null | undefined;

/**
 * The process's pool of pre-drawn challenges (docs/challenges.md, "Drawing off the request path"), started
 * by the first image challenge; null when IMAGE_POOL_SIZE=0. Processes that never serve an image never fork
 * renderer processes or load the canvas. A renderer's exits and restarts go to `logger` at warn: a crash
 * loop in the native canvas must be visible to the operator, not only as 503s.
 */
export function imagePool(logger?: Pick<Logger, 'warn' | 'info'>): ImagePool | null {
  if (pool !== undefined) return pool;
  const { perKind, workers, waiting } = imagePoolSettings();
  if (perKind === 0) {
    pool = null;
    return pool;
  }
  const threads = new ImageWorkers(workers, {
    onEvent: ({ type, pid, detail }) =>
      type === 'exit'
        ? logger?.warn({ pid }, `image renderer ${detail}`)
        : logger?.info({ pid }, `image renderer started: ${detail}`),
  });
  pool = new ImagePool({
    kinds: CHALLENGE_KINDS,
    perKind,
    render: threads.draw,
    inline: drawInline,
    concurrency: workers * RENDERS_PER_WORKER,
    waiting,
  }).start();
  return pool;
}

/**
 * A unique challenge of the kind: popped from the pool (served once), or the next one its workers draw; when
 * too many requests already wait for one, the request is shed with 503 and Retry-After (drawing never runs
 * on the event loop, whatever the flood). Without a pool (IMAGE_POOL_SIZE=0) it is drawn inline.
 */
export async function makeImage(
  kind: ChallengeKind,
  logger?: Pick<Logger, 'warn' | 'info'>,
): Promise<DrawnImage> {
  const pool = imagePool(logger);
  if (!pool) return drawInline(kind);
  try {
    return await pool.take(kind);
  } catch (error) {
    if (!(error instanceof PoolEmpty)) throw error;
    throw new GatehouseError(
      'service_unavailable',
      'Image challenges are being requested faster than they are drawn: try again in a moment.',
      { 'Retry-After': '1' },
    );
  }
}

export function checkImage(kind: ChallengeKind, answer: unknown, submission: unknown): Verdict {
  return verifyChallenge(kind, answer as ChallengeAnswer, submission);
}

/**
 * Submissions allowed: the image kind's bound, or one for proof-of-work only. A proof-of-work that fails its
 * spot check burns the challenge whatever this says: a retry would give a cheater another draw of the pick.
 */
export function maxAttempts(challenge: Pick<SealedChallenge, 'img'>): number {
  return challenge.img ? MAX_ATTEMPTS[challenge.img.kind] : 1;
}
