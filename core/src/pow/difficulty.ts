import { POW_LIMITS, type PowParams, targetForAttempts } from './params.ts';

/**
 * How a risk score becomes a puzzle. The Argon2 cost is fixed per policy; the score only chooses how many
 * hashes a solve takes, so the table in docs/pow.md (measured seconds per score) stays true.
 */
export type DifficultyPolicy = {
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  /** Milliseconds one hash takes in a Chromium Web Worker on a mid machine, measured by core/bench/pow/run.ts. */
  msPerHash: number;
  /** Average hashes per sub-puzzle while count < maxCount; a verify costs 1/this of a solve. */
  attemptsPerSubPuzzle: number;
  /** Most sub-puzzles; past it, each sub-puzzle gets harder instead. */
  maxCount: number;
  /** Expected solve seconds at given scores, scores and seconds both ascending; log-linear in between. */
  curve: ReadonlyArray<readonly [score: number, seconds: number]>;
};

/** The default: Argon2id 4 MiB, t=1, p=1, about 0.5 s at low risk, rising to about 8 s at score 100 (docs/pow.md). */
export const DEFAULT_POW_POLICY: DifficultyPolicy = {
  memoryKiB: 4096,
  iterations: 1,
  parallelism: 1,
  msPerHash: 9,
  attemptsPerSubPuzzle: 8,
  maxCount: 32,
  curve: [
    [0, 0.5],
    [30, 0.5],
    [60, 1.2],
    [80, 3],
    [100, 8],
  ],
};

/** Expected solve seconds for a score: log-linear between the policy's curve points, clamped at both ends. */
export function secondsForScore(score: number, curve: DifficultyPolicy['curve']): number {
  const s = Number.isFinite(score) ? Math.min(100, Math.max(0, score)) : 100;
  let [prevScore, prevSeconds] = curve[0] ?? [0, 1];
  if (s <= prevScore) return prevSeconds;
  for (const [pointScore, pointSeconds] of curve) {
    if (s <= pointScore) {
      const f = (s - prevScore) / (pointScore - prevScore || 1);
      return prevSeconds * (pointSeconds / prevSeconds) ** f;
    }
    [prevScore, prevSeconds] = [pointScore, pointSeconds];
  }
  return prevSeconds;
}

/**
 * Maps a risk score (0..100; NaN counts as 100) to puzzle parameters whose expected solve time follows the
 * policy's curve; expected hashes never decrease as the score rises (property-tested).
 */
export function difficultyForScore(score: number, policy: DifficultyPolicy = DEFAULT_POW_POLICY): PowParams {
  const { memoryKiB, iterations, parallelism, msPerHash, attemptsPerSubPuzzle, maxCount } = policy;
  const attempts = Math.max(1, (secondsForScore(score, policy.curve) * 1000) / msPerHash);
  const wanted = Math.max(1, Math.ceil(attempts / attemptsPerSubPuzzle));
  const max = Math.min(maxCount, POW_LIMITS.count.max);
  // Below maxCount the sub-puzzles keep their size and their number grows; above it they grow harder.
  const count = Math.min(wanted, max);
  const target = wanted <= max ? targetForAttempts(attemptsPerSubPuzzle) : targetForAttempts(attempts / max);
  return { algorithm: 'argon2id', memoryKiB, iterations, parallelism, count, target };
}
