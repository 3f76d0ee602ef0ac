import { describe, expect, it } from 'vitest';
import { DEFAULT_POW_POLICY, difficultyForScore } from './difficulty.ts';
import { meetsTarget, nonceBytes, toBase64Url } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { nativeHasher } from './native.ts';
import { expectedAttempts, type PowParams, targetForAttempts } from './params.ts';
import { createPuzzle, type PowSolution, type Puzzle, parsePuzzle } from './puzzle.ts';
import { solvePuzzle } from './solve.ts';
import { spotCheckSolution, spotCheckSolutions, verifySolution, wellFormedSolution } from './verify.ts';

// Tiny hashes: the property is about the check, not the hash. Two attempts per sub-puzzle, so failing
// nonces are easy to find.
const COUNT = 4;
const params: PowParams = {
  algorithm: 'argon2id',
  memoryKiB: 8,
  iterations: 1,
  parallelism: 1,
  count: COUNT,
  target: targetForAttempts(2),
};

/** The first nonce above `above` whose hash misses the target: a skipped sub-puzzle, still ascending. */
async function failingNonce(puzzle: Puzzle, above: number): Promise<number> {
  const salt = parsePuzzle(puzzle)!.salt;
  for (let n = above + 1; ; n++) {
    if (!meetsTarget(await wasmHasher(nonceBytes(n), salt, puzzle), puzzle.target)) return n;
  }
}

/** A made-up prefix meeting any target: what a cheater sends for a sub-puzzle it did not hash. */
const FAKE_PREFIX = toBase64Url(new Uint8Array(8));

/** A solution whose last `skipped` sub-puzzles were not solved (nonces still strictly ascending). */
async function cheated(skipped: number): Promise<{ puzzle: Puzzle; solution: PowSolution }> {
  const puzzle = createPuzzle(params);
  const { nonces, hashes } = await solvePuzzle(puzzle);
  for (let i = COUNT - skipped; i < COUNT; i++) {
    nonces[i] = await failingNonce(puzzle, nonces[i - 1] ?? -1);
    hashes[i] = FAKE_PREFIX;
  }
  return { puzzle, solution: { nonces, hashes } };
}

function counting(): { hasher: PowHasher; calls: () => number } {
  let calls = 0;
  return {
    hasher: (password, salt, p) => {
      calls++;
      return wasmHasher(password, salt, p);
    },
    calls: () => calls,
  };
}

describe('spotCheckSolution: every sub-puzzle against its claimed prefix', () => {
  it('a solution with one sub-puzzle left out of n is always refused', async () => {
    for (let i = 0; i < 60; i++) {
      const { puzzle, solution } = await cheated(1);
      expect(await spotCheckSolution(puzzle, solution)).toBe(false);
    }
  });

  it('leaving out any one of the sub-puzzles is refused, whichever it is', async () => {
    const puzzle = createPuzzle(params);
    const honest = await solvePuzzle(puzzle);
    for (let k = 0; k < COUNT; k++) {
      const hashes = [...honest.hashes];
      hashes[k] = FAKE_PREFIX;
      expect(await spotCheckSolution(puzzle, { nonces: honest.nonces, hashes })).toBe(false);
    }
  });

  it('a solved nonce sent with a prefix that is not its hash is refused', async () => {
    const puzzle = createPuzzle(params);
    const { nonces, hashes } = await solvePuzzle(puzzle);
    const swapped = { nonces, hashes: [hashes[1]!, hashes[0]!, ...hashes.slice(2)] };
    expect(await spotCheckSolution(puzzle, swapped)).toBe(false);
  });

  it('an honest solution always passes, with one hash per sub-puzzle', async () => {
    const puzzle = createPuzzle(params);
    const solution = await solvePuzzle(puzzle);
    for (let i = 0; i < 10; i++) {
      const { hasher, calls } = counting();
      expect(await spotCheckSolution(puzzle, solution, { hasher })).toBe(true);
      expect(calls()).toBe(COUNT);
    }
  });

  it('a made-up first prefix is refused after one hash', async () => {
    const puzzle = createPuzzle(params);
    const { nonces, hashes } = await solvePuzzle(puzzle);
    const { hasher, calls } = counting();
    expect(
      await spotCheckSolution(puzzle, { nonces, hashes: [FAKE_PREFIX, ...hashes.slice(1)] }, { hasher }),
    ).toBe(false);
    expect(calls()).toBe(1);
  });

  it('malformed input is refused before any hash', async () => {
    const puzzle = createPuzzle(params);
    const { nonces, hashes } = await solvePuzzle(puzzle);
    const { hasher, calls } = counting();
    for (const bad of [
      null,
      'x',
      {},
      { nonces },
      { nonces: nonces.slice(1), hashes: hashes.slice(1) },
      { nonces: [...nonces].reverse(), hashes },
      { nonces: [nonces[0], nonces[0], nonces[1], nonces[2]], hashes },
      { nonces: nonces.map((n) => n + 0.5), hashes },
      { nonces: [-1, ...nonces.slice(1)], hashes },
      { nonces: [...nonces.slice(0, 3), 2 ** 32], hashes },
      { nonces, hashes: [...hashes.slice(0, 3), 'AAAA'] },
    ]) {
      expect(wellFormedSolution(puzzle, bad)).toBeNull();
      expect(await spotCheckSolution(puzzle, bad, { hasher })).toBe(false);
    }
    expect(await spotCheckSolution({ ...puzzle, v: 2 }, { nonces, hashes }, { hasher })).toBe(false);
    expect(await spotCheckSolution({ ...puzzle, target: 0 }, { nonces, hashes }, { hasher })).toBe(false);
    expect(calls()).toBe(0);
  });

  it('several puzzles in one submit: each is hashed, so leaving out either is always refused', async () => {
    // A keyboard slide at the hard tier carries two puzzles, each of the default's one sub-puzzle.
    const one = { ...params, count: 1 };
    const main = createPuzzle(one);
    const extra = createPuzzle(one);
    const mainSolution = await solvePuzzle(main);
    const extraSolution = await solvePuzzle(extra);
    const { hasher, calls } = counting();
    expect(
      await spotCheckSolutions(
        [
          [main, mainSolution],
          [extra, extraSolution],
        ],
        { hasher },
      ),
    ).toBe(true);
    expect(calls()).toBe(2);
    for (let i = 0; i < 50; i++) {
      const skippedExtra = { nonces: [await failingNonce(extra, -1)], hashes: [FAKE_PREFIX] };
      expect(
        await spotCheckSolutions([
          [main, mainSolution],
          [extra, skippedExtra],
        ]),
      ).toBe(false);
      expect(
        await spotCheckSolutions([
          [main, skippedExtra],
          [extra, extraSolution],
        ]),
      ).toBe(false);
    }
    // Any malformed solution refuses the whole submit before a hash.
    expect(
      await spotCheckSolutions(
        [
          [main, mainSolution],
          [extra, { nonces: [1] }],
        ],
        { hasher },
      ),
    ).toBe(false);
    expect(calls()).toBe(2);
  });

  it('a puzzle sealed with the old default (scrypt 4 MiB, 8 hashes per sub-puzzle) still verifies', async () => {
    // A challenge carries its own parameters, so one in flight when the default changes still verifies.
    const hasher = nativeHasher();
    const old: PowParams = {
      algorithm: 'scrypt',
      memoryKiB: 4096,
      iterations: 1,
      parallelism: 1,
      count: 6,
      target: targetForAttempts(8),
    };
    const puzzle = createPuzzle(old);
    const solution = await solvePuzzle(puzzle, hasher ? { hasher } : {});
    expect(await spotCheckSolution(puzzle, solution, hasher ? { hasher } : {})).toBe(true);
    expect(await verifySolution(puzzle, solution, hasher ? { hasher } : {})).toBe(true);
  }, 60_000);
});

describe('the default policy', () => {
  it('has one sub-puzzle at every score, so the one hash the server computes covers the whole puzzle', () => {
    const manySubPuzzles = { ...DEFAULT_POW_POLICY, maxCount: 12 };
    for (const score of [0, 30, 50, 60, 70, 80, 90, 100]) {
      const now = difficultyForScore(score);
      expect(now).toMatchObject({ algorithm: 'scrypt', memoryKiB: 512, count: 1 });
      // The same browser seconds as the same curve cut into sub-puzzles of 52 hashes: at most the rounding
      // of those up to whole sub-puzzles (312 against 270 hashes at low risk) below it.
      const ratio = expectedAttempts(now) / expectedAttempts(difficultyForScore(score, manySubPuzzles));
      expect(ratio).toBeGreaterThan(0.85);
      expect(ratio).toBeLessThanOrEqual(1.0001);
    }
  });
});
