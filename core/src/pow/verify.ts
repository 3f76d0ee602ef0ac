import { fromBase64Url, meetsTarget, nonceBytes } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { MAX_NONCE } from './params.ts';
import { HASH_PREFIX_BYTES, type Puzzle, parsePuzzle } from './puzzle.ts';

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
 * Each claimed hash prefix decoded, when every one is HASH_PREFIX_BYTES of base64url whose first four bytes
 * meet the target (no hash needed to refuse the rest), or null.
 */
function claimedPrefixes(values: unknown, count: number, target: number): Uint8Array[] | null {
  if (!Array.isArray(values) || values.length !== count) return null;
  const out: Uint8Array[] = [];
  for (const value of values) {
    const bytes = typeof value === 'string' ? fromBase64Url(value) : null;
    if (!bytes || bytes.length !== HASH_PREFIX_BYTES || !meetsTarget(bytes, target)) return null;
    out.push(bytes);
  }
  return out;
}

/** True when the hash starts with the claimed prefix; every byte compared, whatever differs first. */
function startsWith(hash: Uint8Array, prefix: Uint8Array): boolean {
  if (hash.length < prefix.length) return false;
  let diff = 0;
  for (let i = 0; i < prefix.length; i++) diff |= hash[i]! ^ prefix[i]!;
  return diff === 0;
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
  // 1-3. The puzzle and the solution are well formed (see wellFormedSolution): no hash yet.
  const formed = wellFormedSolution(puzzle, solution);
  if (!formed) return false;
  // 4. Each nonce's hash starts with the prefix the solution claims for it (whose first four bytes meet the
  // target); stop at the first that does not (cost: at most `count` hashes).
  const hasher = options.hasher ?? wasmHasher;
  try {
    for (const [i, nonce] of formed.nonces.entries()) {
      const hash = await hasher(nonceBytes(nonce), formed.salt, formed.puzzle);
      if (!startsWith(hash, formed.prefixes[i]!)) return false;
    }
  } catch {
    return false;
  }
  return true;
}

export type SpotCheckOptions = VerifyOptions;

/** The puzzle, its salt, and the solution's nonces and claimed hash prefixes when all are well formed, or null. */
export function wellFormedSolution(
  puzzle: unknown,
  solution: unknown,
): { puzzle: Puzzle; salt: Uint8Array; nonces: number[]; prefixes: Uint8Array[] } | null {
  // 1. The puzzle is well formed: known version and algorithm, every parameter within POW_LIMITS, 16-byte salt.
  const parsed = parsePuzzle(puzzle);
  if (!parsed) return null;
  // 2. The solution is an object holding exactly `count` nonces and `count` hash prefixes.
  if (typeof solution !== 'object' || solution === null) return null;
  const { nonces, hashes } = solution as { nonces?: unknown; hashes?: unknown };
  // 3. Each nonce is an unsigned 32-bit integer, strictly ascending; each prefix is 8 bytes meeting the target.
  if (!Array.isArray(nonces) || nonces.length !== parsed.puzzle.count || !ascendingNonces(nonces))
    return null;
  const prefixes = claimedPrefixes(hashes, parsed.puzzle.count, parsed.puzzle.target);
  if (!prefixes) return null;
  return { ...parsed, nonces, prefixes };
}

/**
 * The server's check of one submit that carries one or more puzzles (a hard-tier slide made with the keyboard
 * carries two): every solution is well formed, then every sub-puzzle of every puzzle hashes to the prefix
 * the solution claims, stopping at the first that does not. One hash per sub-puzzle: one for the default
 * policy's puzzles. A nonce whose hash was never computed passes only if its claimed 64-bit prefix is right
 * by chance (2^-64), so no part of the work can be left out (docs/pow.md, "No pass without the work"). The
 * caller burns the challenge on a false answer: a refused submit costs the server one hash more than the
 * hashes its sender computed.
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
  if (formed.length === 0) return false;
  const hasher = options.hasher ?? wasmHasher;
  try {
    for (const f of formed) {
      for (const [i, nonce] of f.nonces.entries()) {
        if (!startsWith(await hasher(nonceBytes(nonce), f.salt, f.puzzle), f.prefixes[i]!)) return false;
      }
    }
  } catch {
    return false;
  }
  return true;
}

/** spotCheckSolutions for one puzzle: the shape, then each sub-puzzle's hash against its prefix. */
export function spotCheckSolution(
  puzzle: unknown,
  solution: unknown,
  options: SpotCheckOptions = {},
): Promise<boolean> {
  return spotCheckSolutions([[puzzle, solution]], options);
}
