import { describe, expect, it } from 'vitest';
import { meetsTarget, nonceBytes } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { type PowParams, targetForAttempts } from './params.ts';
import { createPuzzle, type Puzzle, parsePuzzle } from './puzzle.ts';
import { solvePuzzle } from './solve.ts';
import { spotCheckSolution, wellFormedSolution } from './verify.ts';

// Tiny hashes: the property is about the pick, not the hash. Two attempts per sub-puzzle, so failing
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

/** A solution whose last `skipped` sub-puzzles were not solved (nonces still strictly ascending). */
async function cheated(skipped: number): Promise<{ puzzle: Puzzle; nonces: number[] }> {
  const puzzle = createPuzzle(params);
  const nonces = [...(await solvePuzzle(puzzle)).nonces];
  for (let i = COUNT - skipped; i < COUNT; i++) nonces[i] = await failingNonce(puzzle, nonces[i - 1] ?? -1);
  return { puzzle, nonces };
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

describe('spotCheckSolution: one random sub-puzzle per submit', () => {
  it('a solution with one skipped sub-puzzle out of n is refused with probability ~1/n over many challenges', async () => {
    const CHALLENGES = 240;
    let refused = 0;
    for (let i = 0; i < CHALLENGES; i++) {
      const { puzzle, nonces } = await cheated(1);
      const { hasher, calls } = counting();
      if (!(await spotCheckSolution(puzzle, { nonces }, { hasher }))) refused++;
      expect(calls()).toBe(1);
    }
    // Binomial(240, 1/4): mean 60, standard deviation 6.7; these bounds are 4.5 deviations either side.
    expect(refused).toBeGreaterThanOrEqual(30);
    expect(refused).toBeLessThanOrEqual(90);
  });

  it('skipping half the sub-puzzles passes about half the time: success probability is 1 - s', async () => {
    const CHALLENGES = 120;
    let passed = 0;
    for (let i = 0; i < CHALLENGES; i++) {
      const { puzzle, nonces } = await cheated(2);
      if (await spotCheckSolution(puzzle, { nonces })) passed++;
    }
    // Binomial(120, 1/2): mean 60, standard deviation 5.5.
    expect(passed).toBeGreaterThanOrEqual(35);
    expect(passed).toBeLessThanOrEqual(85);
  });

  it('the pick is the checked sub-puzzle: the skipped one is refused, the others pass', async () => {
    const { puzzle, nonces } = await cheated(1);
    for (let k = 0; k < COUNT; k++) {
      expect(await spotCheckSolution(puzzle, { nonces }, { pick: () => k })).toBe(k < COUNT - 1);
    }
  });

  it('an honest solution always passes, with exactly one hash', async () => {
    const puzzle = createPuzzle(params);
    const solution = await solvePuzzle(puzzle);
    for (let i = 0; i < 40; i++) {
      const { hasher, calls } = counting();
      expect(await spotCheckSolution(puzzle, solution, { hasher })).toBe(true);
      expect(calls()).toBe(1);
    }
  });

  it('malformed input is refused before any hash', async () => {
    const puzzle = createPuzzle(params);
    const { nonces } = await solvePuzzle(puzzle);
    const { hasher, calls } = counting();
    for (const bad of [
      null,
      'x',
      {},
      { nonces: nonces.slice(1) },
      { nonces: [...nonces].reverse() },
      { nonces: [nonces[0], nonces[0], nonces[1], nonces[2]] },
      { nonces: nonces.map((n) => n + 0.5) },
      { nonces: [-1, ...nonces.slice(1)] },
      { nonces: [...nonces.slice(0, 3), 2 ** 32] },
    ]) {
      expect(wellFormedSolution(puzzle, bad)).toBeNull();
      expect(await spotCheckSolution(puzzle, bad, { hasher })).toBe(false);
    }
    expect(await spotCheckSolution({ ...puzzle, v: 2 }, { nonces }, { hasher })).toBe(false);
    expect(await spotCheckSolution({ ...puzzle, target: 0 }, { nonces }, { hasher })).toBe(false);
    expect(calls()).toBe(0);
  });
});
