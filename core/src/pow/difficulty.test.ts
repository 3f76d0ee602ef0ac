import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POW_POLICY, difficultyForScore, secondsForScore } from './difficulty.ts';
import { expectedAttempts, paramsProblem } from './params.ts';

const seconds = (score: number) =>
  (expectedAttempts(difficultyForScore(score)) * DEFAULT_POW_POLICY.msPerHash) / 1000;

describe('difficultyForScore', () => {
  it('is monotone: a higher score never expects fewer hashes or sub-puzzles', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -50, max: 150, noNaN: true }),
        fc.double({ min: -50, max: 150, noNaN: true }),
        (a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const x = difficultyForScore(lo);
          const y = difficultyForScore(hi);
          expect(expectedAttempts(y)).toBeGreaterThanOrEqual(expectedAttempts(x));
          expect(y.count).toBeGreaterThanOrEqual(x.count);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('always yields parameters within the limits', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: false }), (score) => {
        expect(paramsProblem(difficultyForScore(score))).toBeNull();
      }),
    );
  });

  it('follows the documented curve: about 0.5 s at low risk, rising to about 8 s', () => {
    expect(seconds(0)).toBeGreaterThanOrEqual(0.3);
    expect(seconds(0)).toBeLessThanOrEqual(1);
    expect(seconds(30)).toBeLessThanOrEqual(1);
    expect(seconds(100)).toBeGreaterThan(6);
    expect(seconds(100)).toBeLessThan(10);
    expect(difficultyForScore(Number.NaN)).toEqual(difficultyForScore(100));
    expect(difficultyForScore(-5)).toEqual(difficultyForScore(0));
  });

  it('interpolates log-linearly between curve points', () => {
    const curve = [
      [0, 1],
      [100, 4],
    ] as const;
    expect(secondsForScore(50, curve)).toBeCloseTo(2, 10);
    expect(secondsForScore(200, curve)).toBe(4);
  });
});
