import { meetsTarget, nonceBytes, toBase64Url } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { expectedAttempts, MAX_NONCE } from './params.ts';
import { HASH_PREFIX_BYTES, type PowSolution, type Puzzle, parsePuzzle } from './puzzle.ts';

/** Progress after each attempt: how far the solver is, for a progress bar. */
export type SolveProgress = {
  /** Hashes computed so far. */
  attempts: number;
  /** Sub-puzzles solved so far, out of `count`. */
  found: number;
  count: number;
  /** Average total hashes for this puzzle; `attempts / expectedAttempts` is a fair progress estimate. */
  expectedAttempts: number;
};

export type SolveOptions = {
  onProgress?: (progress: SolveProgress) => void;
  /** Aborting rejects the returned promise with the signal's reason between two attempts. */
  signal?: AbortSignal;
  /** Defaults to hash-wasm; a faster hasher must give byte-identical output. */
  hasher?: PowHasher;
};

/** Longest stretch of solving without yielding to the event loop, so abort messages get through. */
const YIELD_EVERY_MS = 200;

const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Finds `count` distinct nonces whose hashes are below the target, in ascending order, each with its hash's
 * prefix; throws for a malformed puzzle.
 */
export async function solvePuzzle(puzzle: Puzzle, options: SolveOptions = {}): Promise<PowSolution> {
  const parsed = parsePuzzle(puzzle);
  if (!parsed) throw new TypeError('Malformed proof-of-work puzzle.');
  const { puzzle: p, salt } = parsed;
  const { onProgress, signal, hasher = wasmHasher } = options;
  const expected = expectedAttempts(p);
  const nonces: number[] = [];
  const hashes: string[] = [];
  let lastYield = Date.now();
  for (let nonce = 0; nonce <= MAX_NONCE; nonce++) {
    signal?.throwIfAborted();
    const hash = await hasher(nonceBytes(nonce), salt, p);
    if (meetsTarget(hash, p.target)) {
      nonces.push(nonce);
      hashes.push(toBase64Url(hash.subarray(0, HASH_PREFIX_BYTES)));
    }
    onProgress?.({ attempts: nonce + 1, found: nonces.length, count: p.count, expectedAttempts: expected });
    if (nonces.length === p.count) return { nonces, hashes };
    if (Date.now() - lastYield >= YIELD_EVERY_MS) {
      await yieldToEventLoop();
      lastYield = Date.now();
    }
  }
  throw new RangeError('Proof-of-work nonce space exhausted: the target is too small for this puzzle.');
}
