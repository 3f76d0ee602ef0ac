import { describe, expect, it } from 'vitest';
import { createPuzzle, difficultyForScore, nativeHasher, solvePuzzle, verifySolution } from './index.ts';

// The API example of docs/pow.md, run as written with the default policy at a low score.
describe('docs/pow.md example', () => {
  it('creates, solves and verifies a default low-risk puzzle', async () => {
    const score = 0;
    const bar = (_fraction: number) => {};
    const signal = new AbortController().signal;
    const puzzle = createPuzzle(difficultyForScore(score), (n) => crypto.getRandomValues(new Uint8Array(n)));
    expect(puzzle).toMatchObject({ algorithm: 'scrypt', memoryKiB: 512, count: 1 });
    const solution = await solvePuzzle(puzzle, {
      onProgress: (p) => bar(p.attempts / p.expectedAttempts),
      signal,
      hasher: nativeHasher(), // keeps the suite fast; the browser uses hash-wasm
    });
    const ok = await verifySolution(puzzle, solution, { hasher: nativeHasher() });
    expect(ok).toBe(true);
    expect(await verifySolution(puzzle, solution)).toBe(true);
  });
});
