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
