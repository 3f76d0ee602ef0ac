import { fromBase64Url, toBase64Url } from './encoding.ts';
import { type PowParams, paramsProblem } from './params.ts';

/** Version of the puzzle format; a verifier rejects any other. */
export const PUZZLE_VERSION = 1;
/** Bytes of fresh randomness in every puzzle's salt. */
export const SALT_BYTES = 16;

/**
 * A puzzle as it travels: the parameters plus a fresh random salt, about 150 bytes of JSON. The server seals
 * it (HMAC and expiry) before handing it out; this module never trusts it to be unaltered, only well formed.
 */
export type Puzzle = PowParams & {
  v: typeof PUZZLE_VERSION;
  /** 16 random bytes, base64url without padding: the Argon2 salt of every attempt. */
  salt: string;
};

/**
 * What a solver returns: `count` distinct nonces in ascending order, each one solving a sub-puzzle, and beside
 * each nonce the first HASH_PREFIX_BYTES of its hash (base64url). The prefix binds every nonce to its hash:
 * a client that skipped a hash has to guess 64 bits the server recomputes, instead of hoping the nonce
 * meets the target by chance.
 */
export type PowSolution = { nonces: number[]; hashes: string[] };

/** Bytes of each nonce's hash a solution carries: the four the target reads, and four more. */
export const HASH_PREFIX_BYTES = 8;

/** Fills `length` bytes from a cryptographically secure generator. */
export type RandomBytes = (length: number) => Uint8Array;

const webRandomBytes: RandomBytes = (length) => globalThis.crypto.getRandomValues(new Uint8Array(length));

/** Creates a puzzle with a fresh salt; throws for parameters outside POW_LIMITS (a configuration error). */
export function createPuzzle(params: PowParams, randomBytes: RandomBytes = webRandomBytes): Puzzle {
  const problem = paramsProblem(params);
  if (problem) throw new RangeError(`Invalid proof-of-work parameters: ${problem}.`);
  const salt = randomBytes(SALT_BYTES);
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES) {
    throw new RangeError(`randomBytes(${SALT_BYTES}) must return ${SALT_BYTES} bytes.`);
  }
  return puzzleOf(params, toBase64Url(salt));
}

/** Exactly the puzzle's fields: anything else the input carried is left behind. */
function puzzleOf(params: PowParams, salt: string): Puzzle {
  const { algorithm, memoryKiB, iterations, parallelism, count, target } = params;
  return { v: PUZZLE_VERSION, algorithm, memoryKiB, iterations, parallelism, count, target, salt };
}

/** A well-formed puzzle with its decoded salt, or null: never throws, whatever the input. */
export function parsePuzzle(input: unknown): { puzzle: Puzzle; salt: Uint8Array } | null {
  if (typeof input !== 'object' || input === null) return null;
  const p = input as Record<string, unknown>;
  if (p.v !== PUZZLE_VERSION || paramsProblem(p) !== null || typeof p.salt !== 'string') return null;
  const salt = fromBase64Url(p.salt);
  if (!salt || salt.length !== SALT_BYTES) return null;
  return { puzzle: puzzleOf(p as PowParams, p.salt), salt };
}
