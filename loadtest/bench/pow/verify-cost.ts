/**
 * The server's CPU per submit for the proof-of-work check (spotCheckSolution with nativeHasher, as the API
 * calls it): right answers, answers whose made-up prefix the one hash refuses, and malformed answers.
 * `process.cpuUsage()` counts libuv's pool threads, where the hash runs.
 *
 *   npx node loadtest/bench/pow/verify-cost.ts   (POW_VERIFY_SUBMITS=400)
 */
import { difficultyForScore } from '../../../core/src/pow/difficulty.ts';
import { nativeHasher } from '../../../core/src/pow/native.ts';
import { createPuzzle, type PowSolution, type Puzzle } from '../../../core/src/pow/puzzle.ts';
import { solvePuzzle } from '../../../core/src/pow/solve.ts';
import { spotCheckSolution } from '../../../core/src/pow/verify.ts';

const SUBMITS = Number(process.env.POW_VERIFY_SUBMITS ?? 400);
const hasher = nativeHasher();
if (!hasher) throw new Error('node:crypto scrypt is needed (Node >= 24.7)');

const cases: Array<{ label: string; score: number; answer: (p: Puzzle, s: PowSolution) => unknown }> = [
  { label: 'right answer, low risk', score: 0, answer: (_p, s) => s },
  { label: 'right answer, score 100', score: 100, answer: (_p, s) => s },
  {
    label: 'made-up prefix (refused by the hash)',
    score: 0,
    answer: (_p, s) => ({ nonces: s.nonces, hashes: s.hashes.map(() => 'AAAAAAAAAAA') }),
  },
  { label: 'malformed (no prefixes)', score: 0, answer: (_p, s) => ({ nonces: s.nonces }) },
];

for (const c of cases) {
  // A handful of solved puzzles reused: the check's cost does not depend on which puzzle it is.
  const solved = [];
  for (let i = 0; i < 8; i++) {
    const puzzle = createPuzzle(difficultyForScore(c.score));
    solved.push({ puzzle, solution: await solvePuzzle(puzzle, { hasher }) });
  }
  let accepted = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < SUBMITS; i++) {
    const { puzzle, solution } = solved[i % solved.length]!;
    if (await spotCheckSolution(puzzle, c.answer(puzzle, solution), { hasher })) accepted++;
  }
  const cpu = process.cpuUsage(cpu0);
  const us = (cpu.user + cpu.system) / SUBMITS;
  process.stdout.write(`${c.label}: ${us.toFixed(0)} µs CPU per submit (${accepted}/${SUBMITS} accepted)\n`);
}
