import { POW_LIMITS, type PowAlgorithm, type PowParams, targetForAttempts } from './params.ts';

/**
 * How a risk score becomes a puzzle. The hash and its cost are fixed per policy; the score only chooses how
 * many hashes a solve takes, so the table in docs/pow.md (measured seconds per score) stays true.
 */
export type DifficultyPolicy = {
  algorithm: PowAlgorithm;
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  /** Milliseconds one hash takes in a Chromium Web Worker on a mid machine, measured by loadtest/bench/pow/run.ts. */
  msPerHash: number;
  /** Average hashes per sub-puzzle while count < maxCount. */
  attemptsPerSubPuzzle: number;
  /**
   * Most sub-puzzles; past it sub-puzzles get harder. The server hashes every sub-puzzle, so this is also
   * the most hashes a right submit costs it per puzzle (docs/pow.md).
   */
  maxCount: number;
  /** Expected solve seconds at given scores, scores and seconds both ascending; log-linear in between. */
  curve: ReadonlyArray<readonly [score: number, seconds: number]>;
};

/** Test-mode apps (integrators' CI): one hash of 8 KiB that always succeeds, on the main API and the standby alike. */
export const TEST_MODE_POW: PowParams = {
  algorithm: 'argon2id',
  memoryKiB: 8,
  iterations: 1,
  parallelism: 1,
  count: 1,
  target: 2 ** 32,
};

/**
 * The default, chosen by loadtest/bench/pow/run.ts (docs/pow.md): scrypt N = 512, r = 8, p = 1 (512 KiB), about 1.2 ms
 * per hash in a Chromium worker and 0.6 ms through OpenSSL. One sub-puzzle per puzzle: the server hashes
 * every sub-puzzle (so no part of the work can be left out), and one keeps that to one hash per submit;
 * more would narrow the spread of solve times at one hash each. About 0.5 s at low risk, rising to about 8 s
 * at score 100. Puzzles sealed with other parameters carry them and still verify.
 */
export const DEFAULT_POW_POLICY: DifficultyPolicy = {
  algorithm: 'scrypt',
  memoryKiB: 512,
  iterations: 1,
  parallelism: 1,
  msPerHash: 1.85,
  attemptsPerSubPuzzle: 52,
  maxCount: 1,
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
  const { algorithm, memoryKiB, iterations, parallelism, msPerHash, attemptsPerSubPuzzle, maxCount } = policy;
  const attempts = Math.max(1, (secondsForScore(score, policy.curve) * 1000) / msPerHash);
  const wanted = Math.max(1, Math.ceil(attempts / attemptsPerSubPuzzle));
  const max = Math.min(maxCount, POW_LIMITS.count.max);
  // Below maxCount the sub-puzzles keep their size and their number grows; above it they grow harder.
  const count = Math.min(wanted, max);
  const target = wanted <= max ? targetForAttempts(attemptsPerSubPuzzle) : targetForAttempts(attempts / max);
  return { algorithm, memoryKiB, iterations, parallelism, count, target };
}

/**
 * Puzzle parameters costing `seconds` of one browser core on average whatever the score (the policy's hash and
 * sub-puzzle sizes): the flat prices of the keyboard's extra proof and of the accessible alternative.
 */
export function difficultyForSeconds(
  seconds: number,
  policy: DifficultyPolicy = DEFAULT_POW_POLICY,
): PowParams {
  return difficultyForScore(100, { ...policy, curve: [[0, seconds]] });
}

/**
 * Sub-puzzles of the flat-priced puzzles (the keyboard's proof, the accessible alternative's ticket, on the
 * main API and the standby alike): several seconds of work whose end the widget announces, so the spread
 * of one geometric draw (a 95th percentile of 3× the mean) would be felt; twelve bring it to 1.5×. The
 * verifier hashes every one (docs/pow.md): twelve hashes for these rare submits.
 */
export const FLAT_PRICE_SUB_PUZZLES = 12;

/** Puzzle parameters of a flat price: `seconds` of one browser core on average, in FLAT_PRICE_SUB_PUZZLES sub-puzzles. */
export function flatPriceDifficulty(seconds: number): PowParams {
  return difficultyForSeconds(seconds, { ...DEFAULT_POW_POLICY, maxCount: FLAT_PRICE_SUB_PUZZLES });
}
