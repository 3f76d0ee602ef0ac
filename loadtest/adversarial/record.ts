/**
 * Writes trajectories.json, the replay solver's set of "recorded" drags. No people were recorded: the set
 * is drawn from core's human model (test-trajectories.ts: minimum-jerk movement, overshoot, tremor,
 * drift, sample jitter) with fixed seeds, which is what a bot writer would otherwise collect from a few
 * sessions. Run: npx node loadtest/adversarial/record.ts
 */
import { writeFileSync } from 'node:fs';
import { range, seededRandom } from '../../core/src/challenges/random.ts';
import { humanDrag } from '../../core/src/challenges/test-trajectories.ts';

const round = (v: number) => Math.round(v * 10) / 10;
const trajectories = Array.from({ length: 12 }, (_, i) => {
  const rng = seededRandom(`recorded-${i}`);
  const target = Math.round(range(rng, 90, 220));
  return humanDrag(rng, target, { durationMs: range(rng, 600, 2000) }).map((p) => ({
    t: round(p.t),
    x: round(p.x),
    y: round(p.y),
  }));
});
writeFileSync(
  new URL('trajectories.json', import.meta.url),
  `${JSON.stringify({ source: 'synthetic: core/src/challenges/test-trajectories.ts humanDrag, seeds recorded-0..11 (record.ts)', trajectories })}\n`,
);
console.log(`wrote ${trajectories.length} trajectories`);
