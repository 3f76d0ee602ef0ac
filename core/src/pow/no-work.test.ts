import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { difficultyForScore } from './difficulty.ts';
import { toBase64Url } from './encoding.ts';
import type { PowHasher } from './hash.ts';
import { nativeHasher } from './native.ts';
import { targetForAttempts } from './params.ts';
import { createPuzzle } from './puzzle.ts';
import { spotCheckSolution } from './verify.ts';

/*
 * No pass without the work (docs/pow.md, "No pass without the work"): an answer whose hashes were never
 * computed passes with probability at most 10^-6 per submit, at every score. Two halves: real scrypt puzzles
 * of the default policy through the server's own verifier, and a property run at scale with a stand-in
 * random oracle (the property is about the check, not about scrypt).
 */

/** A deterministic stand-in for the memory-hard hash: SHA-256 of password, salt and the cost fields. */
const oracle: PowHasher = (password, salt, p) =>
  Promise.resolve(
    new Uint8Array(
      createHash('sha256')
        .update(password)
        .update(salt)
        .update(`${p.algorithm}/${p.memoryKiB}/${p.iterations}/${p.parallelism}`)
        .digest(),
    ),
  );

/** `n` bytes from the secure generator. */
const randomBytes = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));

/** A made-up hash prefix that meets the target (its first four bytes below it), as a cheater would send. */
function fabricated(target: number): string {
  const bytes = randomBytes(8);
  new DataView(bytes.buffer).setUint32(0, Math.floor(Math.random() * target), false);
  return toBase64Url(bytes);
}

/** What a client that computes nothing can send for a puzzle of `count` sub-puzzles. */
function junk(count: number, target: number, style: 'bare' | 'fabricated'): unknown {
  const nonces = Array.from({ length: count }, (_, i) => i + 1);
  return style === 'bare' ? { nonces } : { nonces, hashes: nonces.map(() => fabricated(target)) };
}

describe('no pass without the work', () => {
  it('nonces 1..count with no hashing: no pass in 2,000 submits of real default puzzles (the server verifier)', async () => {
    const hasher = nativeHasher();
    const SUBMITS = 2000;
    let passed = 0;
    for (let i = 0; i < SUBMITS; i++) {
      const puzzle = createPuzzle(difficultyForScore(i % 2 === 0 ? 0 : 100));
      const answer = junk(puzzle.count, puzzle.target, i % 4 < 2 ? 'bare' : 'fabricated');
      if (await spotCheckSolution(puzzle, answer, hasher ? { hasher } : {})) passed++;
    }
    // At 1/52 a pass (a single spot check per puzzle at low risk) this would be ~20; at 10^-6 it is 0 with
    // probability 0.998.
    expect(passed).toBe(0);
  }, 120_000);

  it('junk answers at scale: 0 passes in 1,200,000 submits over every shape a cheater can choose', async () => {
    let passed = 0;
    let submits = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          count: fc.integer({ min: 1, max: 12 }),
          attempts: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 5000 })),
          style: fc.constantFrom('bare' as const, 'fabricated' as const),
        }),
        async ({ count, attempts, style }) => {
          const target = targetForAttempts(attempts);
          const puzzle = createPuzzle({ ...difficultyForScore(0), count, target });
          for (let i = 0; i < 4000; i++) {
            submits++;
            if (await spotCheckSolution(puzzle, junk(count, target, style), { hasher: oracle })) passed++;
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(submits).toBe(1_200_000);
    // The arithmetic gives 2^-64 per made-up prefix (docs/pow.md); zero passes in 1.2 × 10^6 submits bounds
    // it below 2.5 × 10^-6 at 95% confidence (the rule of three), where one spot check passes one in 52.
    expect(passed).toBe(0);
  }, 600_000);
});
