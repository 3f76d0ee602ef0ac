/**
 * The slide locators of page-solvers.js run outside the browser, on challenges drawn here, for quick
 * comparisons while changing the rendering (seconds instead of the harness's minutes). Same locator code
 * on the same encoded bytes; the images are decoded by Skia instead of Chromium, and nothing is entered or
 * submitted, so it measures where the locator lands, not whether the API accepts (the harness does that).
 *
 *   npx node sdk/web/adversarial/offline.ts [--n 100] [--only slideOutline,slideHole,slideContent] [--seed off]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { seededRandom } from '../../../core/src/challenges/random.ts';
import { generateSlide, SLIDE_TOLERANCE_PX } from '../../../core/src/challenges/slide.ts';
import { wilson } from './harness.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '100' },
    only: { type: 'string', default: 'slideOutline,slideHole,slideContent' },
    seed: { type: 'string', default: 'off' },
  },
});
type Locate = (input: unknown) => number[];
const page: { __adversary?: Record<string, Locate> } = {};
new Function('window', readFileSync(new URL('page-solvers.js', import.meta.url), 'utf8'))(page);
const adversary = page.__adversary as Record<string, Locate>;

async function pixels(image: { data: Buffer }) {
  const img = await loadImage(image.data);
  const c = createCanvas(img.width, img.height);
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return { w: img.width, h: img.height, d: ctx.getImageData(0, 0, img.width, img.height).data };
}

const n = Number(values.n);
const locators = values.only.split(',');
const hits = new Map(locators.map((l) => [l, 0]));
for (let k = 0; k < n; k++) {
  const c = await generateSlide(seededRandom(`${values.seed}-${k}`));
  const input = {
    bg: await pixels(c.view.background),
    pc: await pixels(c.view.piece),
    pieceY: c.view.pieceY,
  };
  for (const l of locators) {
    const [x] = (adversary[l] as Locate)(input);
    if (x !== undefined && Math.abs(x - c.answer.x) <= SLIDE_TOLERANCE_PX)
      hits.set(l, (hits.get(l) ?? 0) + 1);
  }
}
for (const [l, k] of hits) {
  const [lo, hi] = wilson(k, n);
  console.log(
    `${l.padEnd(14)} located ${k}/${n} (95 % interval ${Math.round(lo * 100)}–${Math.round(hi * 100)} %)`,
  );
}
