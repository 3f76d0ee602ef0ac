/**
 * Proof-of-work for the invisible tier: memory-hard puzzles (scrypt by default, Argon2id supported) split into
 * sub-puzzles; docs/pow.md gives the measurements behind the choice.
 * Runs in browsers, Web Workers and Node; `nativeHasher()` is the optional server fast path.
 */
export {
  DEFAULT_POW_POLICY,
  type DifficultyPolicy,
  difficultyForScore,
  difficultyForSeconds,
  FLAT_PRICE_SUB_PUZZLES,
  flatPriceDifficulty,
  secondsForScore,
  TEST_MODE_POW,
} from './difficulty.ts';
export { HASH_LENGTH, type HashParams, type PowHasher, wasmHasher } from './hash.ts';
export { nativeHasher } from './native.ts';
export {
  expectedAttempts,
  MAX_NONCE,
  POW_ALGORITHMS,
  POW_LIMITS,
  type PowAlgorithm,
  type PowParams,
  paramsProblem,
  targetForAttempts,
} from './params.ts';
export {
  createPuzzle,
  HASH_PREFIX_BYTES,
  type PowSolution,
  PUZZLE_VERSION,
  type Puzzle,
  parsePuzzle,
  type RandomBytes,
  SALT_BYTES,
} from './puzzle.ts';
export { type SolveOptions, type SolveProgress, solvePuzzle } from './solve.ts';
export {
  type SpotCheckOptions,
  spotCheckSolution,
  spotCheckSolutions,
  type VerifyOptions,
  verifySolution,
  wellFormedSolution,
} from './verify.ts';
export type { WorkerRequest, WorkerResponse } from './worker.ts';
