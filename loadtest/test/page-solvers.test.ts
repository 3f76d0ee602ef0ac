import { describe, expect, it } from 'vitest';
import { generateClick } from '../../core/src/challenges/click.ts';
import { seededRandom } from '../../core/src/challenges/random.ts';
import { adversary, pixels } from '../adversarial/locators.ts';

/*
 * The harness's own locators (page-solvers.js, the code it injects into the page) against the images the
 * product draws today, on fixed seeds: a guard that the click scene keeps its targets indistinguishable
 * from the other symbols to a template locator. A pick among the 6–8 symbols at random hits 1 in 7.
 */
describe("the harness's template locator on click scenes", () => {
  it('lands on a target no more often than on any symbol', async () => {
    let hit = 0;
    let total = 0;
    for (let i = 0; i < 5; i++) {
      const { view, answer } = await generateClick(seededRandom(`click-${i}`));
      const input = { scene: await pixels(view.image), strip: await pixels(view.promptImage) };
      const at = (adversary.click?.(input) ?? []) as Array<{ x: number; y: number }>;
      answer.targets.forEach((t, k) => {
        const c = at[k];
        if (c && Math.hypot(c.x - t.x, c.y - t.y) <= t.r) hit++;
        total++;
      });
    }
    expect(total).toBeGreaterThanOrEqual(15);
    expect(hit / total).toBeLessThanOrEqual(0.25);
  }, 120_000);
});
