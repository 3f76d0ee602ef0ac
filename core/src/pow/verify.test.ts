import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { meetsTarget, nonceBytes, toBase64Url } from './encoding.ts';
import { wasmHasher } from './hash.ts';
import { nativeHasher } from './native.ts';
import { type PowParams, targetForAttempts } from './params.ts';
import { createPuzzle, type PowSolution, type Puzzle, parsePuzzle } from './puzzle.ts';
import { solvePuzzle } from './solve.ts';
import { verifySolution } from './verify.ts';

// Small memory keeps the suite fast; the logic is the same at any cost. The target is not tiny on purpose:
// a solution carries over to an altered puzzle with probability (1/attempts)^count, which at 4 attempts
// (1/256 per check) made the rejection tests below fail about once in 50 runs; at 64 it is 6e-8.
const params: PowParams = {
  algorithm: 'argon2id',
  memoryKiB: 64,
  iterations: 1,
  parallelism: 1,
  count: 4,
  target: targetForAttempts(64),
};

/** A nonce whose hash misses the target, so substituting it must fail step 4. */
async function failingNonce(puzzle: Puzzle, above: number): Promise<number> {
  const salt = parsePuzzle(puzzle)!.salt;
  for (let n = above + 1; ; n++) {
    if (!meetsTarget(await wasmHasher(nonceBytes(n), salt, puzzle), puzzle.target)) return n;
  }
}

/**
 * An answer for these nonces as a cheater would send it: each nonce with its real hash prefix when that meets
 * the target, otherwise a made-up prefix that does (so only the hash, step 4, can refuse it).
 */
async function answer(puzzle: Puzzle, nonces: unknown[]): Promise<{ nonces: unknown[]; hashes: string[] }> {
  const salt = parsePuzzle(puzzle)?.salt ?? new Uint8Array(16);
  const hashes = [];
  for (const n of nonces) {
    const real =
      Number.isInteger(n) && (n as number) >= 0 && (n as number) < 2 ** 32
        ? await wasmHasher(nonceBytes(n as number), salt, puzzle)
        : new Uint8Array(32);
    const prefix = real.slice(0, 8);
    if (!meetsTarget(prefix, puzzle.target)) prefix.fill(0, 0, 4);
    hashes.push(toBase64Url(prefix));
  }
  return { nonces, hashes };
}

describe('verifySolution', () => {
  let puzzle: Puzzle;
  let solution: PowSolution;
  beforeAll(async () => {
    puzzle = createPuzzle(params);
    solution = await solvePuzzle(puzzle);
  });

  it('accepts a solved puzzle, with hash-wasm and with the native hasher', async () => {
    expect(solution.nonces).toHaveLength(4);
    expect(await verifySolution(puzzle, solution)).toBe(true);
    expect(await verifySolution(puzzle, solution, { hasher: nativeHasher() })).toBe(true);
    expect(
      await verifySolution(JSON.parse(JSON.stringify(puzzle)), JSON.parse(JSON.stringify(solution))),
    ).toBe(true);
  });

  it('step 4: rejects a wrong nonce', async () => {
    const nonces = [...solution.nonces];
    nonces[3] = await failingNonce(puzzle, nonces[3]!);
    expect(await verifySolution(puzzle, await answer(puzzle, nonces))).toBe(false);
  });

  it('step 4: rejects the solution against an altered puzzle (salt, memory, iterations, harder target)', async () => {
    const other = createPuzzle(params);
    const harder = { ...puzzle, target: 1 };
    expect(await verifySolution({ ...puzzle, salt: other.salt }, solution)).toBe(false);
    expect(await verifySolution({ ...puzzle, memoryKiB: 72 }, solution)).toBe(false);
    expect(await verifySolution({ ...puzzle, iterations: 2 }, solution)).toBe(false);
    expect(await verifySolution(harder, solution)).toBe(false);
  });

  it('step 4: rejects a solution made for another puzzle', async () => {
    const other = createPuzzle(params);
    const otherSolution = await solvePuzzle(other);
    expect(await verifySolution(other, otherSolution)).toBe(true);
    expect(await verifySolution(puzzle, otherSolution)).toBe(false);
  });

  it('step 3: rejects duplicated, unordered and out-of-range nonces', async () => {
    const [a, b, c, d] = solution.nonces as [number, number, number, number];
    expect(await verifySolution(puzzle, await answer(puzzle, [a, a, a, a]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [a, b, c, c]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [b, a, c, d]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [-1, b, c, d]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [a, b, c, 2 ** 32]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [a, b, c, d + 0.5]))).toBe(false);
    expect(await verifySolution(puzzle, await answer(puzzle, [String(a), b, c, d]))).toBe(false);
  });

  it('step 3: rejects missing, malformed and off-target hash prefixes before any hash', async () => {
    let calls = 0;
    const counting: typeof wasmHasher = (...args) => {
      calls++;
      return wasmHasher(...args);
    };
    const { nonces, hashes } = solution;
    const miss = toBase64Url(new Uint8Array(8).fill(255));
    for (const bad of [
      undefined,
      hashes.slice(1),
      [...hashes.slice(0, 3), miss],
      [...hashes.slice(0, 3), hashes[3]!.slice(1)],
      [...hashes.slice(0, 3), `${hashes[3]}AA`],
      [...hashes.slice(0, 3), 7],
    ]) {
      expect(await verifySolution(puzzle, { nonces, hashes: bad }, { hasher: counting })).toBe(false);
    }
    expect(calls).toBe(0);
  });

  it('step 4: rejects a nonce sent with a prefix that is not its own', async () => {
    const [h0, h1, ...rest] = solution.hashes;
    expect(await verifySolution(puzzle, { nonces: solution.nonces, hashes: [h1, h0, ...rest] })).toBe(false);
  });

  it('step 2: rejects the wrong number of nonces and non-objects', async () => {
    const { nonces } = solution;
    for (const bad of [nonces.slice(1), [...nonces, nonces[3]! + 1], []]) {
      expect(await verifySolution(puzzle, await answer(puzzle, bad))).toBe(false);
    }
    for (const bad of [null, undefined, 3, 'x', nonces, { nonce: nonces }, { nonces: 'a,b' }]) {
      expect(await verifySolution(puzzle, bad)).toBe(false);
    }
  });

  it('step 1: rejects malformed puzzles even with a valid solution', async () => {
    for (const bad of [null, {}, { ...puzzle, v: 2 }, { ...puzzle, salt: '' }, { ...puzzle, count: 0 }]) {
      expect(await verifySolution(bad as Puzzle, solution)).toBe(false);
    }
  });

  it('answers false without throwing for arbitrary input, and for a failing hasher', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), async (p, s) => {
        expect(await verifySolution(p as Puzzle, s)).toBe(false);
        expect(await verifySolution(puzzle, await answer(puzzle, [s, s, s, s]))).toBe(false);
      }),
      { numRuns: 200 },
    );
    const broken = async () => {
      throw new Error('out of memory');
    };
    expect(await verifySolution(puzzle, solution, { hasher: broken })).toBe(false);
  });

  it('costs at most one hash per sub-puzzle and stops at the first miss', async () => {
    let calls = 0;
    const counting: typeof wasmHasher = (...args) => {
      calls++;
      return wasmHasher(...args);
    };
    await verifySolution(puzzle, solution, { hasher: counting });
    expect(calls).toBe(4);
    calls = 0;
    const nonces = [await failingNonce(puzzle, -1), ...solution.nonces.slice(1)];
    if (nonces[0]! < nonces[1]!) {
      expect(await verifySolution(puzzle, await answer(puzzle, nonces), { hasher: counting })).toBe(false);
      expect(calls).toBe(1);
    }
  });

  it('round-trips scrypt puzzles too, and a scrypt solution fails as an Argon2id puzzle', async () => {
    const scryptPuzzle = createPuzzle({ ...params, algorithm: 'scrypt', memoryKiB: 64 });
    const scryptSolution = await solvePuzzle(scryptPuzzle);
    expect(await verifySolution(scryptPuzzle, scryptSolution)).toBe(true);
    expect(await verifySolution(scryptPuzzle, scryptSolution, { hasher: nativeHasher() })).toBe(true);
    expect(await verifySolution({ ...scryptPuzzle, algorithm: 'argon2id' }, scryptSolution)).toBe(false);
  });
});
