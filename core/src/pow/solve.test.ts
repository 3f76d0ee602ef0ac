import { describe, expect, it } from 'vitest';
import { expectedAttempts, type PowParams } from './params.ts';
import { createPuzzle, type Puzzle } from './puzzle.ts';
import { type SolveProgress, solvePuzzle } from './solve.ts';

const params: PowParams = {
  algorithm: 'argon2id',
  memoryKiB: 32,
  iterations: 1,
  parallelism: 1,
  count: 3,
  target: 2 ** 30,
};

describe('solvePuzzle', () => {
  it('reports progress after every attempt and returns count ascending nonces', async () => {
    const events: SolveProgress[] = [];
    const solution = await solvePuzzle(createPuzzle(params), { onProgress: (p) => events.push(p) });
    expect(solution.nonces).toHaveLength(3);
    expect(solution.nonces).toEqual([...solution.nonces].sort((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ found: 3, count: 3, expectedAttempts: expectedAttempts(params) });
    expect(events.at(-1)!.attempts).toBe(solution.nonces.at(-1)! + 1);
    expect(events.map((e) => e.attempts)).toEqual(events.map((_, i) => i + 1));
  });

  it('solves trivial puzzles (test apps) with the first nonces', async () => {
    const solution = await solvePuzzle(createPuzzle({ ...params, memoryKiB: 8, count: 2, target: 2 ** 32 }));
    expect(solution.nonces).toEqual([0, 1]);
  });

  it('stops with the abort reason when the signal fires', async () => {
    const controller = new AbortController();
    const hard = createPuzzle({ ...params, target: 1 });
    const run = solvePuzzle(hard, {
      signal: controller.signal,
      onProgress: (p) => p.attempts === 5 && controller.abort(new Error('stop')),
    });
    await expect(run).rejects.toThrow('stop');
  });

  it('throws for a malformed puzzle instead of searching forever', async () => {
    await expect(solvePuzzle({ ...createPuzzle(params), target: 0 } as Puzzle)).rejects.toThrow(/Malformed/);
  });
});
