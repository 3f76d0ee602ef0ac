import {
  type ChallengeAnswer,
  type ChallengeKind,
  generateChallenge,
  MAX_ATTEMPTS,
  type Verdict,
  verifyChallenge,
  viewToJson,
} from '@gatehouse/core/challenges';
import {
  createPuzzle,
  difficultyForScore,
  nativeHasher,
  type Puzzle,
  parsePuzzle,
  TEST_MODE_POW,
  verifySolution,
} from '@gatehouse/core/pow';
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
  return { puzzle: createPuzzle(params) };
}

export async function checkPow(sealedPuzzle: unknown, solution: unknown): Promise<boolean> {
  const parsed = parsePuzzle(sealedPuzzle);
  if (!parsed) return false;
  return verifySolution(parsed.puzzle, solution, hasher ? { hasher } : {});
}

export function pickImageKind(kinds: readonly ChallengeKind[]): ChallengeKind {
  const bytes = new Uint8Array(1);
  crypto.getRandomValues(bytes);
  return kinds[bytes[0]! % kinds.length]!;
}

export async function makeImage(
  kind: ChallengeKind,
): Promise<{ kind: ChallengeKind; view: unknown; answer: ChallengeAnswer }> {
  const challenge = await generateChallenge(kind);
  return { kind, view: viewToJson(challenge.view), answer: challenge.answer };
}

export function checkImage(kind: ChallengeKind, answer: unknown, submission: unknown): Verdict {
  return verifyChallenge(kind, answer as ChallengeAnswer, submission);
}

/** Wrong answers allowed: the image kind's bound, or a small fixed bound for proof-of-work only. */
export function maxAttempts(challenge: Pick<SealedChallenge, 'img'>): number {
  return challenge.img ? MAX_ATTEMPTS[challenge.img.kind] : 3;
}
