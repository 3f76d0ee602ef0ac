import { describe, expect, it } from 'vitest';
import { DEFAULT_POW_POLICY, difficultyForScore } from './difficulty.ts';
import { meetsTarget, nonceBytes } from './encoding.ts';
import { type PowHasher, wasmHasher } from './hash.ts';
import { nativeHasher } from './native.ts';
import { expectedAttempts, type PowParams, targetForAttempts } from './params.ts';
import { createPuzzle, type Puzzle, parsePuzzle } from './puzzle.ts';
import { solvePuzzle } from './solve.ts';
import { spotCheckSolution, spotCheckSolutions, verifySolution, wellFormedSolution } from './verify.ts';

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

  it("several puzzles in one submit: still one hash, and a pick weighted by each sub-puzzle's work", async () => {
    // A keyboard slide at the hard tier carries two puzzles. Puzzle `big`: 4 sub-puzzles of 2 hashes each;
    // `small`: 4 of 1 (target 2^32, so every nonce solves). Weights follow the expected hashes.
    const big = createPuzzle(params);
    const small = createPuzzle({ ...params, target: 2 ** 32 });
    const bigSolution = await solvePuzzle(big);
    const smallSolution = await solvePuzzle(small);
    let seen: number[] = [];
    const { hasher, calls } = counting();
    const pairs = [
      [big, bigSolution],
      [small, smallSolution],
    ] as const;
    const pick = (weights: number[]) => {
      seen = weights;
      return 5;
    };
    expect(await spotCheckSolutions(pairs, { hasher, pick })).toBe(true);
    expect(seen).toEqual([2, 2, 2, 2, 1, 1, 1, 1]);
    expect(calls()).toBe(1);
    // Any malformed solution refuses the whole submit before a hash.
    expect(await spotCheckSolutions([pairs[0], [small, { nonces: [1] }]], { hasher })).toBe(false);
    expect(calls()).toBe(1);
  });

  it('skipping the whole smaller puzzle passes with probability (work kept) / (total work)', async () => {
    // `big`: 4 sub-puzzles × 2 hashes, solved; `skipped`: 2 × 2 hashes, none solved. Work skipped: 4 of 12,
    // so the pass rate is 2/3 (a uniform pick over the 6 sub-puzzles would give the same here only by chance).
    const big = createPuzzle(params);
    const bigSolution = await solvePuzzle(big);
    const skipped = createPuzzle({ ...params, count: 2 });
    const { nonces } = await cheatedAll(skipped);
    const TRIALS = 300;
    let passed = 0;
    for (let i = 0; i < TRIALS; i++) {
      if (
        await spotCheckSolutions([
          [big, bigSolution],
          [skipped, { nonces }],
        ])
      )
        passed++;
    }
    // Binomial(300, 2/3): mean 200, standard deviation 8.2; bounds 4.5 deviations either side.
    expect(passed).toBeGreaterThanOrEqual(163);
    expect(passed).toBeLessThanOrEqual(237);
  });

  it('a puzzle sealed with the old default (scrypt 4 MiB, 8 hashes per sub-puzzle) still verifies', async () => {
    // Challenges in flight during the deploy that changed the default to 512 KiB carry their own parameters.
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
    for (let k = 0; k < old.count; k++) {
      expect(await spotCheckSolution(puzzle, solution, { pick: () => k, ...(hasher && { hasher }) })).toBe(
        true,
      );
    }
    expect(await verifySolution(puzzle, solution, hasher ? { hasher } : {})).toBe(true);
  }, 60_000);
});

describe('the default policy after the switch to 512 KiB', () => {
  it('expects the same browser seconds per score as the old 4 MiB policy (12 ms per hash, 8 per sub-puzzle)', () => {
    const oldPolicy = { ...DEFAULT_POW_POLICY, memoryKiB: 4096, msPerHash: 12, attemptsPerSubPuzzle: 8 };
    for (const score of [0, 30, 50, 60, 70, 80, 90, 100]) {
      const now = difficultyForScore(score);
      const before = difficultyForScore(score, oldPolicy);
      expect(now.memoryKiB).toBe(512);
      expect(now.count).toBe(before.count);
      const seconds = (p: PowParams, ms: number) => (expectedAttempts(p) * ms) / 1000;
      // Within 3%: the sub-puzzle sizes are rounded to whole targets.
      expect(seconds(now, DEFAULT_POW_POLICY.msPerHash) / seconds(before, 12)).toBeGreaterThan(0.97);
      expect(seconds(now, DEFAULT_POW_POLICY.msPerHash) / seconds(before, 12)).toBeLessThan(1.03);
    }
  });
});

/** Nonces 0.. that all miss the target: a solution that skipped every sub-puzzle, still well formed. */
async function cheatedAll(puzzle: Puzzle): Promise<{ nonces: number[] }> {
  const nonces: number[] = [];
  for (const _ of Array.from({ length: puzzle.count })) {
    nonces.push(await failingNonce(puzzle, nonces.at(-1) ?? -1));
  }
  return { nonces };
}
