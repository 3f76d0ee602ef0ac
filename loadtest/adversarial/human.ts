/**
 * Human first-try success per image kind, beside the scripted solvers' rates on the same challenges
 * (the adversarial bench's people). Each try draws a challenge as the API does, lets the person model of
 * human-model.ts answer it (eased drag with overshoot and correction, tremor, realistic timing, a drop as
 * precise as a hand at the widget's zoom; clicks near each symbol; tiles where the named shape reads as
 * its name), and verifies the answer with core's verifiers, slide drags also against the app's memory of
 * recent drags (the API's replay check). The scripted rates are the strongest locators of page-solvers.js
 * on the same pictures (where their answer lands, as offline.ts counts it).
 *
 *   npx node loadtest/adversarial/human.ts [--n 200] [--seed human] [--only slide,click,select] [--no-scripted]
 */
import { parseArgs } from 'node:util';
import { MemoryReplayMemory } from '../../api/src/risk/replays.ts';
import { generateClick, verifyClick } from '../../core/src/challenges/click.ts';
import { seededRandom } from '../../core/src/challenges/random.ts';
import { generateSelect, verifySelect } from '../../core/src/challenges/select.ts';
import type { Shape } from '../../core/src/challenges/shapes.ts';
import { generateSlide, SLIDE_TOLERANCE_PX, verifySlide } from '../../core/src/challenges/slide.ts';
import { nearDuplicate, slidePrint } from '../../core/src/challenges/trajectory-print.ts';
import { challengeTranslator } from '../../sdk/web/src/ui/strings.ts';
import { shapeTemplates, wilson } from './harness.ts';
import { personClicks, personSelect, personSlide } from './human-model.ts';
import { adversary, pixels } from './locators.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    seed: { type: 'string', default: 'human' },
    only: { type: 'string', default: 'slide,click,select' },
    'no-scripted': { type: 'boolean', default: false },
  },
});
const n = Number(values.n);
const kinds = values.only.split(',');
const scripted = !values['no-scripted'];
const english = challengeTranslator('en');
const pct = (k: number, of: number) => {
  const [lo, hi] = wilson(k, of);
  return `${k}/${of} (${Math.round((k / of) * 1000) / 10} %, 95 % interval ${Math.round(lo * 100)}–${Math.round(hi * 100)} %)`;
};

interface Row {
  kind: string;
  human: number;
  reasons: Map<string, number>;
  scripted?: { name: string; hits: number };
  /** Slide: the drop's distance from the gap, for each try (what a tolerance would make of it). */
  errors?: number[];
  lockerrors?: number[];
}
const rows: Row[] = [];
const started = performance.now();

if (kinds.includes('slide')) {
  const row: Row = { kind: 'slide', human: 0, reasons: new Map(), errors: [], lockerrors: [] };
  if (scripted) row.scripted = { name: 'hole finder (slideHole)', hits: 0 };
  const memory = new MemoryReplayMemory();
  for (let k = 0; k < n; k++) {
    const c = await generateSlide(seededRandom(`${values.seed}-slide-${k}`));
    const person = personSlide(seededRandom(`${values.seed}-slide-person-${k}`), c.answer, c.drawn.turnDeg);
    const submission = { x: person.x, input: person.input, trajectory: person.trajectory };
    let verdict = verifySlide(c.answer, submission);
    const print = slidePrint(submission);
    if (print && (verdict.ok || verdict.reason === 'position')) {
      const seen = await memory.remember('bench', print);
      if (seen.some((old) => nearDuplicate(print.vector, old))) verdict = { ok: false, reason: 'replayed' };
    }
    if (verdict.ok) row.human++;
    else row.reasons.set(verdict.reason, (row.reasons.get(verdict.reason) ?? 0) + 1);
    row.errors?.push(Math.abs(person.x - c.answer.x));
    if (row.scripted) {
      const input = {
        bg: await pixels(c.view.background),
        pc: await pixels(c.view.piece),
        pieceY: c.view.pieceY,
      };
      const [x] = (adversary.slideHole as (i: unknown) => number[])(input);
      const off = x === undefined ? Number.POSITIVE_INFINITY : Math.abs(x - c.answer.x);
      row.lockerrors?.push(off);
      if (off <= SLIDE_TOLERANCE_PX) row.scripted.hits++;
    }
  }
  rows.push(row);
}

if (kinds.includes('click')) {
  const row: Row = { kind: 'click', human: 0, reasons: new Map() };
  if (scripted) row.scripted = { name: 'shape-aware (clickShapes)', hits: 0 };
  for (let k = 0; k < n; k++) {
    const c = await generateClick(seededRandom(`${values.seed}-click-${k}`));
    const verdict = verifyClick(
      c.answer,
      personClicks(seededRandom(`${values.seed}-click-person-${k}`), c.answer),
    );
    if (verdict.ok) row.human++;
    else row.reasons.set(verdict.reason, (row.reasons.get(verdict.reason) ?? 0) + 1);
    if (row.scripted) {
      const input = { scene: await pixels(c.view.image), strip: await pixels(c.view.promptImage) };
      const at = (adversary.clickShapes as (i: unknown, o: unknown) => Array<{ x: number; y: number }>)(
        input,
        {
          templates: shapeTemplates(),
        },
      );
      const t = c.answer.targets;
      if (at.length === t.length && t.every((g, i) => Math.hypot(at[i]!.x - g.x, at[i]!.y - g.y) <= g.r))
        row.scripted.hits++;
    }
  }
  rows.push(row);
}

if (kinds.includes('select')) {
  const row: Row = { kind: 'select', human: 0, reasons: new Map() };
  if (scripted) row.scripted = { name: 'shape-aware (selectShapes)', hits: 0 };
  for (let k = 0; k < n; k++) {
    const c = await generateSelect(seededRandom(`${values.seed}-select-${k}`));
    const shape = c.view.prompt.params.shape as Shape;
    const chosen = personSelect(seededRandom(`${values.seed}-select-person-${k}`), shape, c.drawn);
    const verdict = verifySelect(c.answer, chosen);
    if (verdict.ok) row.human++;
    else
      row.reasons.set(
        `${verdict.reason} (${shape})`,
        (row.reasons.get(`${verdict.reason} (${shape})`) ?? 0) + 1,
      );
    if (row.scripted) {
      const text = english(c.view.prompt.key, c.view.prompt.params).toLowerCase();
      const picked = (adversary.selectShapes as (i: unknown, o: unknown) => number[])(
        { img: await pixels(c.view.image), text },
        { templates: shapeTemplates() },
      );
      const truth = new Set(c.answer.indices);
      if (picked.length === truth.size && picked.every((i) => truth.has(i))) row.scripted.hits++;
    }
  }
  rows.push(row);
}

console.log(`| type | people (model), first try | why the misses | scripted solver | scripted, located |`);
console.log('|---|---|---|---|---|');
for (const r of rows) {
  const why = [...r.reasons].map(([k, v]) => `${k} ${v}`).join(', ') || '–';
  console.log(
    `| ${r.kind} | ${pct(r.human, n)} | ${why} | ${r.scripted?.name ?? '–'} | ${r.scripted ? pct(r.scripted.hits, n) : '–'} |`,
  );
}
const slide = rows.find((r) => r.kind === 'slide');
if (slide?.errors) {
  // What another tolerance would make of the same drops and the same locator answers.
  console.log('\n| slide tolerance | people (model) within | hole finder within |\n|---:|---:|---:|');
  for (const t of [3, 4, 5, 6, 7, 8]) {
    const people = slide.errors.filter((e) => e <= t).length;
    const bot = slide.lockerrors?.length ? `${slide.lockerrors.filter((e) => e <= t).length}/${n}` : '–';
    console.log(`| ±${t} px | ${people}/${n} | ${bot} |`);
  }
}
console.log(
  `\n${((performance.now() - started) / 1000).toFixed(0)} s, n = ${n} per kind, seed ${values.seed}`,
);
process.exit(0);
