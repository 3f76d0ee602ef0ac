/**
 * Proof-of-work parameters: what one puzzle costs to solve and to verify.
 *
 * A puzzle is `count` independent sub-puzzles. Each attempt is one memory-hard hash of a nonce; an attempt
 * succeeds when the first four bytes of the hash, read big-endian, are below `target`. So one sub-puzzle
 * takes 2^32 / target attempts on average, the whole puzzle count × 2^32 / target, and a verifier
 * recomputes exactly `count` hashes. Splitting the work into several sub-puzzles is what keeps the solve
 * time predictable: one geometric search has a standard deviation equal to its mean, the sum of `count`
 * of them only 1/√count of it (docs/pow.md).
 */

/** The memory-hard functions a puzzle may use: Argon2id (RFC 9106) and scrypt (RFC 7914, r = 8). */
export const POW_ALGORITHMS = ['argon2id', 'scrypt'] as const;
export type PowAlgorithm = (typeof POW_ALGORITHMS)[number];

export type PowParams = {
  algorithm: PowAlgorithm;
  /** Memory in KiB: Argon2's m; for scrypt N (a power of two), since 128 · r · N bytes with r = 8 is N KiB. */
  memoryKiB: number;
  /** Argon2 passes over memory (t); scrypt has none, so 1. */
  iterations: number;
  /** Argon2 lanes or scrypt's p; browsers compute them one after another, so 1 is the useful value. */
  parallelism: number;
  /** Number of sub-puzzles: distinct nonces to find. */
  count: number;
  /** Exclusive threshold on the hash's first 32 bits (big-endian); 2^32 makes every attempt succeed. */
  target: number;
};

/** Bounds every side enforces, so a forged or buggy puzzle can never make a client or verifier do unbounded work. */
export const POW_LIMITS = {
  memoryKiB: { min: 8, max: 256 * 1024 },
  iterations: { min: 1, max: 16 },
  parallelism: { min: 1, max: 8 },
  count: { min: 1, max: 64 },
  target: { min: 1, max: 2 ** 32 },
} as const;

/** The largest nonce: nonces are unsigned 32-bit integers. */
export const MAX_NONCE = 0xffff_ffff;

function inRange(value: unknown, range: { min: number; max: number }): value is number {
  return Number.isSafeInteger(value) && (value as number) >= range.min && (value as number) <= range.max;
}

/** Returns why the parameters are unusable, or null when every field is present, typed and within POW_LIMITS. */
export function paramsProblem(params: unknown): string | null {
  if (typeof params !== 'object' || params === null) return 'params must be an object';
  const p = params as Record<string, unknown>;
  if (!POW_ALGORITHMS.includes(p.algorithm as PowAlgorithm)) return 'unsupported algorithm';
  for (const key of ['memoryKiB', 'iterations', 'parallelism', 'count', 'target'] as const) {
    if (!inRange(p[key], POW_LIMITS[key])) return `${key} must be an integer within POW_LIMITS.${key}`;
  }
  const memory = p.memoryKiB as number;
  if (p.algorithm === 'scrypt') {
    if ((memory & (memory - 1)) !== 0) return 'scrypt memoryKiB (N) must be a power of two';
    if (p.iterations !== 1) return 'scrypt takes iterations = 1';
  } else if (memory < 8 * (p.parallelism as number)) return 'memoryKiB must be at least 8 × parallelism';
  return null;
}

/** Average number of hashes a solver computes for these parameters (count × 2^32 / target). */
export function expectedAttempts(params: Pick<PowParams, 'count' | 'target'>): number {
  return (params.count * 2 ** 32) / params.target;
}

/** The target that makes one sub-puzzle take `attempts` hashes on average (attempts ≥ 1). */
export function targetForAttempts(attempts: number): number {
  return Math.max(1, Math.min(2 ** 32, Math.floor(2 ** 32 / Math.max(1, attempts))));
}
