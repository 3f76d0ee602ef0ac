import { meetsTarget, nonceBytes } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { MAX_NONCE } from './params.ts';
import { type Puzzle, parsePuzzle } from './puzzle.ts';

export type VerifyOptions = {
  /** Defaults to hash-wasm; the server may pass nativeHasher(), which tests prove byte-identical. */
  hasher?: PowHasher;
};

/** True when every value is an integer nonce and each one is larger than the one before (so none repeats). */
function ascendingNonces(values: unknown[]): values is number[] {
  let previous = -1;
  for (const value of values) {
    if (!Number.isInteger(value) || (value as number) <= previous || (value as number) > MAX_NONCE)
      return false;
    previous = value as number;
  }
  return true;
}

/**
 * Checks a solution against a puzzle with at most one hash per sub-puzzle; answers false, never throws, for
 * any malformed input. It does not check the seal, the expiry or replay: the caller does, before calling this.
 */
export async function verifySolution(
  puzzle: Puzzle,
  solution: unknown,
  options: VerifyOptions = {},
): Promise<boolean> {
  // 1. The puzzle is well formed: known version and algorithm, every parameter within POW_LIMITS, 16-byte salt.
  const parsed = parsePuzzle(puzzle);
  if (!parsed) return false;
  const { puzzle: p, salt } = parsed;
  // 2. The solution is an object holding exactly `count` nonces.
  if (typeof solution !== 'object' || solution === null) return false;
  const nonces: unknown = (solution as { nonces?: unknown }).nonces;
  if (!Array.isArray(nonces) || nonces.length !== p.count) return false;
  // 3. Each nonce is an unsigned 32-bit integer, strictly ascending: no duplicates, one canonical form.
  if (!ascendingNonces(nonces)) return false;
  // 4. Each nonce's hash is below the target; stop at the first that is not (cost: at most `count` hashes).
  const hasher = options.hasher ?? wasmHasher;
  try {
    for (const nonce of nonces) {
      if (!meetsTarget(await hasher(nonceBytes(nonce), salt, p), p.target)) return false;
    }
  } catch {
    return false;
  }
  return true;
}

/** A uniform index below `n` from a cryptographically secure generator (rejection sampling, no modulo bias). */
function secureIndex(n: number): number {
  const limit = Math.floor(2 ** 32 / n) * n;
  const word = new Uint32Array(1);
  for (;;) {
    globalThis.crypto.getRandomValues(word);
    if (word[0]! < limit) return word[0]! % n;
  }
}

export type SpotCheckOptions = VerifyOptions & {
  /**
   * Which sub-puzzle to hash, as an index into all the sub-puzzles of all the puzzles in order, given each
   * one's expected hashes; defaults to a secure pick weighted by those. Tests only.
   */
  pick?: (weights: number[]) => number;
};

/** An index drawn with probability weights[i] / sum(weights), from a secure generator (2^-32 resolution). */
function securePick(weights: number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let x = (secureIndex(2 ** 32) / 2 ** 32) * total;
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i]!;
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/** The puzzle and the solution's nonces when both are well formed (steps 1-3 of verifySolution, no hash), or null. */
export function wellFormedSolution(
  puzzle: unknown,
  solution: unknown,
): { puzzle: Puzzle; salt: Uint8Array; nonces: number[] } | null {
  const parsed = parsePuzzle(puzzle);
  if (!parsed) return null;
  if (typeof solution !== 'object' || solution === null) return null;
  const nonces: unknown = (solution as { nonces?: unknown }).nonces;
  if (!Array.isArray(nonces) || nonces.length !== parsed.puzzle.count || !ascendingNonces(nonces))
    return null;
  return { ...parsed, nonces };
}

/**
 * The server's check of one submit that carries one or more puzzles (a hard-tier slide made with the keyboard
 * carries two): every solution is well formed, and ONE sub-puzzle among all of them, chosen at random after
 * the submit arrived, is solved. One hash, whatever the puzzles and their `count`. The pick weighs each
 * sub-puzzle by its expected hashes (2^32 / target), so skipping any set of sub-puzzles passes with
 * probability 1 - (work skipped / total work). Sound only when the caller burns the challenge on a false
 * answer and the client cannot predict the pick: then a cheater's expected work per success equals solving
 * everything (docs/pow.md, "Spot-checking one sub-puzzle").
 */
export async function spotCheckSolutions(
  pairs: ReadonlyArray<readonly [puzzle: unknown, solution: unknown]>,
  options: SpotCheckOptions = {},
): Promise<boolean> {
  const formed = [];
  for (const [puzzle, solution] of pairs) {
    const one = wellFormedSolution(puzzle, solution);
    if (!one) return false;
    formed.push(one);
  }
  const subPuzzles = formed.flatMap((f) => f.nonces.map((nonce) => ({ ...f, nonce })));
  if (subPuzzles.length === 0) return false;
  const index = (options.pick ?? securePick)(subPuzzles.map((s) => 2 ** 32 / s.puzzle.target));
  const picked = subPuzzles[index];
  if (!picked) return false;
  try {
    const hash = await (options.hasher ?? wasmHasher)(nonceBytes(picked.nonce), picked.salt, picked.puzzle);
    return meetsTarget(hash, picked.puzzle.target);
  } catch {
    return false;
  }
}

/** spotCheckSolutions for one puzzle: the shape, then one sub-puzzle picked uniformly at random (one hash). */
export function spotCheckSolution(
  puzzle: unknown,
  solution: unknown,
  options: SpotCheckOptions = {},
): Promise<boolean> {
  return spotCheckSolutions([[puzzle, solution]], options);
}
