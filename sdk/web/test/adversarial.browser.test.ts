import { describe, expect, it } from 'vitest';
import { databaseAvailable } from '../../../api/test/harness.ts';
import { runCells, SOLVERS, table } from '../adversarial/harness.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';

/*
 * The adversarial harness's short form (the long one is `npm run bench:adversarial`, docs/adversarial.md):
 * every scripted solver of the ladder and the human-like control, against the real widget and API, with
 * the goals as thresholds. Samples are small, so the thresholds are pooled: every scripted solver
 * together at most 5 % (3 of 60), no single one above 1 of 6, and the controls together at least 95 %
 * (at most 2 misses in 40). What that can show: a solver that passes half the time fails this with
 * probability about 0.9; a control that misses 1 time in 5 fails it with probability about 0.96.
 */
const run = chromiumAvailable() && (await databaseAvailable());

describe.runIf(run)('adversarial harness (short form)', () => {
  const suite = widgetBrowserSuite('gatehouse-adversarial-');

  it('scripted solvers pass at most 5 % on every type; the human-like control at least 95 %', async () => {
    const solvers = SOLVERS.filter((s) => s.role !== 'info');
    const cells = await runCells(
      suite,
      solvers,
      (s) => (s.role === 'control' ? (s.kind === 'slide' ? 20 : 10) : 6),
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
        expect.toSatisfy((k: number) => k <= 1),
      ]);
    expect(count('scripted', (a) => a.passed)).toBeLessThanOrEqual(3);
    expect(count('control', (a) => !a.passed)).toBeLessThanOrEqual(2);
  }, 600_000);
});
