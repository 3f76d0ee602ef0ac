import { describe, expect, it } from 'vitest';
import { databaseAvailable } from '../../../api/test/harness.ts';
import { runCells, SOLVERS, table } from '../adversarial/harness.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';

/*
 * The adversarial harness's short form (the long one is `npm run bench:adversarial`, docs/adversarial.md):
 * every scripted solver of the ladder and the human-like control, against the real widget and API, one
 * fresh page and challenge per attempt. Samples are small (6 per scripted solver, 40 controls), so the
 * thresholds are pooled: the scripted solvers together at most 4 passes in 60, none above 2 of 6; the
 * controls together at most 2 misses in 40. A slide solver with human-like input passes about 14 % of the
 * time by guessing alone (two attempts, 11 of 161 positions each): the per-solver bound leaves room for
 * that floor, and a solver back at the old rates (half or more) fails the test with probability about 0.8.
 */
const run = chromiumAvailable() && (await databaseAvailable());

describe.runIf(run)('adversarial harness (short form)', () => {
  const suite = widgetBrowserSuite('gatehouse-adversarial-');

  it('scripted solvers pass at most 5 % on every type; the human-like control at least 95 %', async () => {
    const solvers = SOLVERS.filter((s) => s.role !== 'info');
    const cells = await runCells(
      suite,
      solvers,
      (s) => (s.role === 'control' ? (s.kind === 'slide' ? 20 : 10) : s.role === 'open' ? 12 : 6),
      {
        seed: 'ci',
      },
    );
    console.log(table(cells));
    const count = (role: string, f: (a: { passed: boolean; error?: string }) => boolean) =>
      cells.filter((c) => c.solver.role === role).flatMap((c) => c.attempts.filter(f)).length;
    // Broken attempts (the page failed) are not results: at most a couple, and never counted as passes.
    expect(
      cells.flatMap((c) => c.attempts.filter((a) => a.error).map((a) => `${c.solver.id}: ${a.error}`)).length,
    ).toBeLessThanOrEqual(2);
    const scripted = cells.filter((c) => c.solver.role === 'scripted');
    for (const c of scripted)
      expect([c.solver.id, c.attempts.filter((a) => a.passed).length]).toEqual([
        c.solver.id,
        expect.toSatisfy((k: number) => k <= 2),
      ]);
    expect(count('scripted', (a) => a.passed)).toBeLessThanOrEqual(4);
    expect(count('control', (a) => !a.passed)).toBeLessThanOrEqual(2);
    // The open row (a shape-aware hole finder that tries both holes) misses the goal today (about half);
    // it must not get back to the old rate (17 of 20 on one try): at most 10 of 12, which a solver at
    // 95 % exceeds with probability about 0.9 and one at 60 % with probability about 0.02.
    for (const c of cells.filter((c) => c.solver.role === 'open'))
      expect([c.solver.id, c.attempts.filter((a) => a.passed).length]).toEqual([
        c.solver.id,
        expect.toSatisfy((k: number) => k <= 10),
      ]);
  }, 600_000);
});
