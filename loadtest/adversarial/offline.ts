/**
 * The slide, click and select locators of page-solvers.js run outside the browser, on challenges drawn here, for
 * quick comparisons while changing the rendering (seconds instead of the harness's minutes). Same locator
 * code on the same encoded bytes; the images are decoded by Skia instead of Chromium, and nothing is entered
 * or submitted, so it measures where the locator lands, not whether the API accepts (the harness does that).
 * A click counts as located when every click lands in its own target, in order (what verifyClick checks
 * apart from timing); the `per target` figure is the share of single targets hit. A select counts as located
 * when the chosen tiles are exactly the matching set (what verifySelect checks); `per tile`, the share of
 * tiles chosen or left as they should be. Seeds: `<seed>-<k>` (slide), `<seed>-click-<k>`, `<seed>-select-<k>`.
 *
 *   npx node loadtest/adversarial/offline.ts [--n 100] [--only slideOutline,slideHole,slideContent,click,clickShapes,clickHoles,clickTexture,select,selectShapes]
 *     [--seed off] [--save dir]   (click and select: writes each scene, prompt or grid as PNG, to look at what the locator saw)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { generateClick } from '../../core/src/challenges/click.ts';
import { seededRandom } from '../../core/src/challenges/random.ts';
import { generateSelect } from '../../core/src/challenges/select.ts';
import { generateSlide, SLIDE_TOLERANCE_PX } from '../../core/src/challenges/slide.ts';
import { challengeTranslator } from '../../sdk/web/src/ui/strings.ts';
import { shapeTemplates, wilson } from './harness.ts';
import { adversary, pixels } from './locators.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '100' },
    only: { type: 'string', default: 'slideOutline,slideHole,slideContent' },
    seed: { type: 'string', default: 'off' },
    save: { type: 'string' },
  },
});

const n = Number(values.n);
const locators = values.only.split(',');
const slideLocators = locators.filter((l) => l.startsWith('slide'));
const clickLocators = locators.filter((l) => l.startsWith('click'));
const selectLocators = locators.filter((l) => l.startsWith('select'));
const hits = new Map(locators.map((l) => [l, 0]));
const targetHits = new Map(clickLocators.map((l) => [l, [0, 0] as [number, number]]));
const tileHits = new Map(selectLocators.map((l) => [l, [0, 0] as [number, number]]));
const savePng = async (img: { data: Buffer }, name: string) => {
  mkdirSync(values.save as string, { recursive: true });
  const i = await loadImage(img.data);
  const cv = createCanvas(i.width, i.height);
  cv.getContext('2d').drawImage(i, 0, 0);
  writeFileSync(join(values.save as string, name), cv.toBuffer('image/png'));
};
const english = challengeTranslator('en');
const started = performance.now();
for (let k = 0; k < n; k++) {
  if (slideLocators.length) {
    const c = await generateSlide(seededRandom(`${values.seed}-${k}`));
    const input = {
      bg: await pixels(c.view.background),
      pc: await pixels(c.view.piece),
      pieceY: c.view.pieceY,
    };
    for (const l of slideLocators) {
      const [x] = (adversary[l] as (i: unknown) => number[])(input);
      if (x !== undefined && Math.abs(x - c.answer.x) <= SLIDE_TOLERANCE_PX)
        hits.set(l, (hits.get(l) ?? 0) + 1);
    }
  }
  if (clickLocators.length) {
    const c = await generateClick(seededRandom(`${values.seed}-click-${k}`));
    if (values.save) {
      await savePng(c.view.image, `click-${k}.png`);
      await savePng(c.view.promptImage, `click-${k}-prompt.png`);
    }
    const input = { scene: await pixels(c.view.image), strip: await pixels(c.view.promptImage) };
    for (const l of clickLocators) {
      // The public shape list, drawn as the select row's templates (the shape-aware locator labels with it).
      const at = (adversary[l] as (i: unknown, o: unknown) => Array<{ x: number; y: number }>)(input, {
        templates: shapeTemplates(),
      });
      const t = c.answer.targets;
      const each = t.map((g, i) => at[i] !== undefined && Math.hypot(at[i].x - g.x, at[i].y - g.y) <= g.r);
      const th = targetHits.get(l) as [number, number];
      th[0] += each.filter(Boolean).length;
      th[1] += t.length;
      if (at.length === t.length && each.every(Boolean)) hits.set(l, (hits.get(l) ?? 0) + 1);
    }
  }
  if (selectLocators.length) {
    // The API's default: shape prompts only, full detail, JPEG.
    const c = await generateSelect(seededRandom(`${values.seed}-select-${k}`));
    if (values.save) await savePng(c.view.image, `select-${k}.png`);
    // The prompt as the widget shows it in English (what the page's locators read from the DOM).
    const text = english(c.view.prompt.key, c.view.prompt.params).toLowerCase();
    const input = { img: await pixels(c.view.image), text };
    const truth = new Set(c.answer.indices);
    for (const l of selectLocators) {
      const chosen =
        l === 'select'
          ? (adversary.select as unknown as (t: unknown, i: unknown) => number[])(shapeTemplates(), input)
          : (adversary[l] as (i: unknown, o: unknown) => number[])(input, { templates: shapeTemplates() });
      const th = tileHits.get(l) as [number, number];
      for (let i = 0; i < 9; i++) if (chosen.includes(i) === truth.has(i)) th[0]++;
      th[1] += 9;
      if (chosen.length === truth.size && chosen.every((i) => truth.has(i)))
        hits.set(l, (hits.get(l) ?? 0) + 1);
    }
  }
}
for (const [l, k] of hits) {
  const [lo, hi] = wilson(k, n);
  const th = targetHits.get(l);
  const tt = tileHits.get(l);
  console.log(
    `${l.padEnd(18)} located ${k}/${n} (95 % interval ${Math.round(lo * 100)}–${Math.round(hi * 100)} %)${th ? `, per target ${th[0]}/${th[1]}` : ''}${tt ? `, per tile ${tt[0]}/${tt[1]}` : ''}`,
  );
}
console.log(`${((performance.now() - started) / 1000).toFixed(0)} s`);
