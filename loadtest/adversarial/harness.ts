/**
 * The adversarial harness: scripted solvers from naive to strong, and a human-like control,
 * each driving the real widget in Chromium against a real API, one fresh page and challenge per attempt.
 * A solver is a locator (where the answer is: pixel arithmetic in the page, or the test oracle, which
 * opens the sealed challenge with the API's keys: test-only knowledge standing in for a person's eyes)
 * plus an input (how the answer is entered). Used by run.ts (the long benchmark) and by
 * loadtest/test/adversarial.browser.test.ts (the short form with thresholds in CI).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { buildWidget } from '@gatehouse/web/build';
import { formPage, launchChromium, type PageServer, render, startPageServer } from '@gatehouse/web/testing';
import { createCanvas } from '@napi-rs/canvas';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { openChallenge } from '../../api/src/challenges/sealed-challenge.ts';
import type { ClickAnswer } from '../../core/src/challenges/click.ts';
import { MAX_ATTEMPTS } from '../../core/src/challenges/index.ts';
import { type Random, seededRandom } from '../../core/src/challenges/random.ts';
import type { SelectAnswer } from '../../core/src/challenges/select.ts';
import { SHAPES, traceShape } from '../../core/src/challenges/shapes.ts';
import { SLIDE_TOLERANCE_PX, type SlideAnswer } from '../../core/src/challenges/slide.ts';
import type { TrajectoryPoint } from '../../core/src/challenges/trajectory.ts';
import { personClicks } from './human-model.ts';
import {
  fixedKeys,
  humanClicks,
  humanLikeDrag,
  humanTimedKeys,
  imprecise,
  instantDrop,
  jitterDrag,
  type KeyScript,
  personDrag,
  playDrag,
  playKeys,
  randomKeys,
  replayDrag,
  straightDrag,
} from './inputs.ts';

export type Kind = 'slide' | 'click' | 'select';
type SlideInput = (rng: Random, x: number) => TrajectoryPoint[] | KeyScript | 'instant';

export interface Solver {
  id: string;
  label: string;
  kind: Kind;
  /** `oracle` is the test's knowledge of the answer; the others look at the pixels only. */
  locator: 'content' | 'outline' | 'hole' | 'template' | 'texture' | 'shapes' | 'holes' | 'oracle';
  /**
   * Scripted solvers must stay at or below 5 %; the control at or above 95 %; info rows have no goal.
   * `open`: a scripted solver whose goal is not met yet (docs/adversarial.md, "Current results"), measured
   * and shown.
   * `escalation`: a solver retrying from ONE address against an app with the default tiers, so the API's
   * escalation after wrong answers applies; it reports passes per init, refused inits included.
   */
  role: 'scripted' | 'control' | 'info' | 'open' | 'escalation';
  slideInput?: SlideInput;
  /** Click rows: where the clicks land, given the answer (the person model's aim); default: on each centre. */
  aim?: (rng: Random, truth: ClickAnswer) => Array<{ x: number; y: number }>;
}

const instant: SlideInput = () => 'instant';
const slide = (
  id: string,
  label: string,
  locator: Solver['locator'],
  slideInput: SlideInput,
  role: Solver['role'] = 'scripted',
): Solver => ({ id, label, kind: 'slide', locator, role, slideInput });

/** The ladder, naive to strong, then the control, then the informational rows. */
export const SOLVERS: readonly Solver[] = [
  slide('straight', 'straight drag, constant speed', 'content', straightDrag),
  slide('instant', 'instant drop', 'content', instant),
  slide('jitter', 'straight drag, ±2 px jitter, 10–24 ms sampling', 'content', jitterDrag),
  slide('keys-fixed', 'keyboard, fixed 60 ms presses', 'content', fixedKeys),
  slide('keys-random', 'keyboard, 60–140 ms random intervals', 'content', randomKeys),
  slide('keys-human', 'keyboard, human-like timing', 'content', humanTimedKeys),
  slide('replay', 'replayed human trajectory + noise', 'content', replayDrag),
  slide('replay-outline', 'replayed trajectory + outline (shape) matcher', 'outline', replayDrag, 'open'),
  slide(
    'replay-hole',
    'replayed trajectory + hole finder (outline turned back, darker inside)',
    'hole',
    replayDrag,
    'open',
  ),
  {
    id: 'click-template',
    label: 'template match, human-timed clicks',
    kind: 'click',
    locator: 'template',
    role: 'scripted',
  },
  {
    id: 'click-texture',
    label: 'template on a texture map, human-timed clicks',
    kind: 'click',
    locator: 'texture',
    role: 'scripted',
  },
  {
    id: 'click-shapes',
    label: 'striped regions segmented, labelled among the public shapes, human-timed clicks',
    kind: 'click',
    locator: 'shapes',
    role: 'open',
  },
  {
    id: 'click-holes',
    label: 'as click-shapes, each prompted shape taking two regions, the twin told by its hole',
    kind: 'click',
    locator: 'holes',
    role: 'open',
  },
  {
    id: 'select-template',
    label: 'colour count / template match, human-timed clicks',
    kind: 'select',
    locator: 'template',
    role: 'scripted',
  },
  {
    id: 'select-shapes',
    label: 'symbols segmented per tile, labelled among the public shapes, human-timed clicks',
    kind: 'select',
    locator: 'shapes',
    role: 'open',
  },
  slide(
    'control',
    'human-like drag (minimum jerk, drift, overshoot), true answer',
    'oracle',
    humanLikeDrag,
    'control',
  ),
  slide(
    'person',
    'person model: eased drag dropped off by eye and hand (mouse or finger), true gap',
    'oracle',
    personDrag,
    // Measured in the long form (goal 95 %); the CI form keeps its controls' count and bounds.
    'info',
  ),
  {
    id: 'click-control',
    label: 'human-timed clicks, true answer',
    kind: 'click',
    locator: 'oracle',
    role: 'control',
  },
  {
    id: 'click-person',
    label: 'person model: each symbol clicked where the eye puts its centre (mouse or finger), true answer',
    kind: 'click',
    locator: 'oracle',
    // Measured in the long form (goal 95 %), like the slide's person row.
    role: 'info',
    aim: (rng, truth) => personClicks(rng, truth),
  },
  {
    id: 'select-control',
    label: 'human-timed clicks, true answer',
    kind: 'select',
    locator: 'oracle',
    role: 'control',
  },
  slide(
    'info-jitter',
    'jitter drag given the true answer (trajectory checks alone)',
    'oracle',
    jitterDrag,
    'info',
  ),
  slide('info-keys-random', 'keyboard 60–140 ms given the true answer', 'oracle', randomKeys, 'info'),
  slide('info-keys-human', 'keyboard, human timing, given the true answer', 'oracle', humanTimedKeys, 'info'),
  slide('info-replay', 'replayed trajectory given the true answer', 'oracle', replayDrag, 'info'),
  slide(
    'info-control-imprecise',
    'human-like drag dropped with 1.5 px (sd) of error, true answer (synthetic)',
    'oracle',
    imprecise(humanLikeDrag, 1.5),
    'info',
  ),
  slide(
    'retry-outline',
    'outline matcher retrying from one address, default tiers (passes per init)',
    'outline',
    replayDrag,
    'escalation',
  ),
];

/**
 * One challenge's result: whether the API accepted an answer (within the attempts it allows: a bot
 * uses every one), whether it did on the first, and whether the locator found the answer.
 */
export interface Attempt {
  passed: boolean;
  passedFirst: boolean;
  located: boolean;
  /** The init was refused (403 request_rejected: too many wrong answers from the address). */
  refused?: boolean;
  /** The tier the init answered (image or hard). */
  tier?: string;
  /** Set when the attempt could not run (the page broke): counted apart, never as a pass. */
  error?: string;
}

export interface Harness {
  api: TestApi;
  site: PageServer;
  browser: Browser;
}

/**
 * A real API that trusts X-Forwarded-For (TRUSTED_PROXIES=loopback, as behind an ingress), the built widget on a page
 * server, and Chromium. Every attempt sends its own address, so the API's escalation after wrong answers
 * (per app and address) never carries one attempt's misses into the next: the rows measure one challenge
 * each. The `escalation` row shares one address on purpose.
 */
export async function startHarness(): Promise<Harness & { close(): Promise<void> }> {
  const widgetDir = mkdtempSync(join(tmpdir(), 'gatehouse-adversarial-'));
  await buildWidget({ outDir: widgetDir });
  // ADVERSARIAL_API_LOG=file: the API's debug log there (why each wrong answer was refused), for diagnosis.
  const logFile = process.env.ADVERSARIAL_API_LOG;
  const logger = logFile
    ? pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true }))
    : undefined;
  const api = await startTestApi({ TRUSTED_PROXIES: 'loopback' }, logger);
  const site = await startPageServer({ widgetDir, apiUrl: api.url, secrets: new Map() });
  const browser = await launchChromium();
  return {
    api,
    site,
    browser,
    async close() {
      await browser.close();
      await site.close();
      await api.close();
      rmSync(widgetDir, { recursive: true, force: true });
    },
  };
}

/** A private address per solver and attempt (10.0.0.0/8: in no hosting range, so it scores as a home would). */
export function addressFor(solverIndex: number, attemptIndex: number): string {
  return `10.${solverIndex % 256}.${Math.floor(attemptIndex / 250) % 256}.${(attemptIndex % 250) + 1}`;
}

const PAGE_SOLVERS = readFileSync(new URL('page-solvers.js', import.meta.url), 'utf8');

/** Shape templates a bot writer draws from the public shape list, as points around the centre (radius 20). */
let templates: Record<string, { radius: number; points: number[][] }> | undefined;
export function shapeTemplates() {
  if (templates) return templates;
  templates = {};
  for (const shape of SHAPES) {
    const c = createCanvas(48, 48);
    const ctx = c.getContext('2d');
    ctx.translate(24, 24);
    ctx.beginPath();
    traceShape(ctx, shape, 20);
    ctx.fillStyle = '#000';
    ctx.fill();
    const d = ctx.getImageData(0, 0, 48, 48).data;
    const points: number[][] = [];
    for (let y = 0; y < 48; y++)
      for (let x = 0; x < 48; x++)
        if ((d[(y * 48 + x) * 4 + 3] as number) > 128) points.push([x - 24, y - 24]);
    templates[shape] = { radius: 20, points };
  }
  return templates;
}

/**
 * An app that always serves an image challenge of `kind`, with velocity and rate limits out of the way;
 * `tiers: 'default'` keeps the default hard tier from score 70 (the escalation row).
 */
export async function imageApp(api: TestApi, kind: Kind, tiers: 'image' | 'default' = 'image') {
  return api.createApp({
    name: `adversarial-${kind}-${tiers}`,
    risk_policy: {
      invisible_below: 0,
      image_below: tiers === 'image' ? 101 : 70,
      image_kinds: [kind],
      velocity: { ip: [1e9, 1e9], prefix: [1e9, 1e9], app: 1e9 },
      rate_limit: { ip_per_minute: 1e9, high_risk_ip_per_minute: 1e9 },
    },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one attempt of `solver` on a fresh page and challenge. */
export async function attempt(
  h: Harness,
  app: { appKey: string; appId: string },
  solver: Solver,
  rng: Random,
  address = '10.255.255.1',
): Promise<Attempt> {
  const context = await h.browser.newContext({ viewport: { width: 900, height: 700 }, locale: 'en-GB' });
  try {
    const page = await context.newPage();
    // The attempt's own address, as an ingress would forward it (added below CORS, on the API's requests only).
    await page.route(`${h.api.url}/**`, (route) =>
      route.continue({ headers: { ...route.request().headers(), 'x-forwarded-for': address } }),
    );
    await page.addInitScript({ content: PAGE_SOLVERS });
    await page.goto(
      h.site.page(`/adv-${Math.random().toString(36).slice(2)}.html`, formPage('<div id="captcha"></div>')),
    );
    const initAnswer = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/init'), {
      timeout: 60_000,
    });
    await render(page, { appKey: app.appKey, apiServer: h.api.url, mode: 'embedded' });
    const initResponse = await initAnswer;
    const initBody = await initResponse.json();
    if (initResponse.status() === 403 && initBody.error === 'request_rejected')
      return { passed: false, passedFirst: false, located: false, refused: true };
    const init = initBody.data;
    const sealed = openChallenge(h.api.runtime.keys, app.appId, init.challenge);
    if (!sealed?.img) throw new Error(`no image challenge (tier ${init.tier})`);
    const truth = sealed.img.answer;
    if (solver.kind === 'slide')
      return { ...(await solveSlide(page, solver, truth as SlideAnswer, rng)), tier: init.tier };
    const submitted = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/submit'), {
      timeout: 90_000,
    });
    const located =
      solver.kind === 'click'
        ? await solveClick(page, solver, truth as ClickAnswer, rng)
        : await solveSelect(page, solver, truth as SelectAnswer, rng);
    const passed = (await submitted).status() === 200;
    return { passed, passedFirst: passed, located, tier: init.tier };
  } catch (error) {
    return { passed: false, passedFirst: false, located: false, error: String(error).split('\n')[0] };
  } finally {
    await context.close();
  }
}

async function waitForImages(page: Page, selector: string) {
  const img = page.locator(selector).first();
  await img.waitFor({ state: 'visible' });
  await page.waitForFunction(
    (sel) => {
      const find = (root: Document | ShadowRoot): HTMLImageElement[] => [
        ...Array.from(root.querySelectorAll(sel) as NodeListOf<HTMLImageElement>),
        ...Array.from(root.querySelectorAll('*')).flatMap((e) => (e.shadowRoot ? find(e.shadowRoot) : [])),
      ];
      const all = find(document);
      return all.length > 0 && all.every((i) => i.complete && i.naturalWidth > 0);
    },
    selector,
    { polling: 50 },
  );
}

/** Slide: up to MAX_ATTEMPTS.slide tries on the same challenge, each at the locator's next candidate. */
async function solveSlide(page: Page, solver: Solver, truth: SlideAnswer, rng: Random): Promise<Attempt> {
  await waitForImages(page, '.slide img');
  const handle = page.locator('.handle');
  const xs =
    solver.locator === 'oracle'
      ? [truth.x, truth.x]
      : await page.evaluate(
          (which) => {
            const adv = (window as unknown as { __adversary: Record<string, () => number[]> }).__adversary;
            return (adv[which] as () => number[])();
          },
          ({ outline: 'slideOutline', hole: 'slideHole' } as Record<string, string>)[solver.locator] ??
            'slideContent',
        );
  const stage = await page.locator('.slide .stage').boundingBox();
  const scale = (stage?.width ?? 300) / 300;
  const result: Attempt = { passed: false, passedFirst: false, located: false };
  for (let i = 0; i < MAX_ATTEMPTS.slide && i < xs.length; i++) {
    const x = xs[i] as number;
    result.located ||= Math.abs(x - truth.x) <= SLIDE_TOLERANCE_PX;
    const submitted = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/submit'), {
      timeout: 60_000,
    });
    const input = (solver.slideInput as SlideInput)(rng, x);
    if (input === 'instant') await instantDrop(page, handle, x, scale);
    else if ('key' in (input[0] ?? {})) await playKeys(page, handle, input as KeyScript);
    else await playDrag(page, handle, input as TrajectoryPoint[], scale);
    if ((await submitted).status() === 200) {
      result.passed = true;
      result.passedFirst = i === 0;
      break;
    }
    // The piece slides back to the start before the next try.
    await sleep(600);
  }
  return result;
}

async function solveClick(page: Page, solver: Solver, truth: ClickAnswer, rng: Random): Promise<boolean> {
  await waitForImages(page, '.click img');
  const at = solver.aim
    ? solver.aim(rng, truth)
    : solver.locator === 'oracle'
      ? truth.targets.map((t) => ({ x: t.x, y: t.y }))
      : await page.evaluate(
          ({ which, templates }) => {
            type Locate = (input?: unknown, options?: unknown) => Array<{ x: number; y: number }>;
            const adv = (window as unknown as { __adversary: Record<string, Locate> }).__adversary;
            // The shape-aware locator labels regions among the public shape list (as the select row does).
            return (adv[which] as Locate)(undefined, { templates });
          },
          {
            which:
              (
                { texture: 'clickTexture', shapes: 'clickShapes', holes: 'clickHoles' } as Record<
                  string,
                  string
                >
              )[solver.locator] ?? 'click',
            templates:
              solver.locator === 'shapes' || solver.locator === 'holes' ? shapeTemplates() : undefined,
          },
        );
  const located =
    at.length === truth.targets.length &&
    at.every(
      (p, i) => Math.hypot(p.x - truth.targets[i]!.x, p.y - truth.targets[i]!.y) <= truth.targets[i]!.r,
    );
  // The person model's aim carries the hand's spread already; the other rows get a little of it.
  await humanClicks(page, page.locator('.click .stage'), 300, at.slice(0, 12), rng, solver.aim ? 0 : 1.5);
  await page.getByRole('button', { name: 'Verify' }).click();
  return located;
}

async function solveSelect(page: Page, solver: Solver, truth: SelectAnswer, rng: Random): Promise<boolean> {
  await waitForImages(page, '.select img');
  type Adversary = { select(t: unknown): number[]; selectShapes(i: unknown, o: unknown): number[] };
  const chosen =
    solver.locator === 'oracle'
      ? truth.indices
      : await page.evaluate(
          ({ shapes, templates }) => {
            const adv = (window as unknown as { __adversary: Adversary }).__adversary;
            // The shape-aware locator labels each tile's regions among the public shape list.
            return shapes ? adv.selectShapes(undefined, { templates }) : adv.select(templates);
          },
          { shapes: solver.locator === 'shapes', templates: shapeTemplates() },
        );
  const located = chosen.length === truth.indices.length && truth.indices.every((i) => chosen.includes(i));
  const tiles = page.locator('.tile');
  await sleep(700 + rng.next() * 800);
  for (const i of chosen) {
    await tiles.nth(i).click({ delay: 60 + rng.next() * 60 });
    await sleep(250 + rng.next() * 400);
  }
  await page.getByRole('button', { name: 'Verify' }).click();
  return located;
}

export interface Cell {
  solver: Solver;
  attempts: Attempt[];
}

/** Runs `n` attempts of each solver, `concurrency` pages at a time, seeded for replay. */
export async function runCells(
  h: Harness,
  solvers: readonly Solver[],
  n: number | ((s: Solver) => number),
  options: { concurrency?: number; seed?: string; onCell?: (c: Cell) => void } = {},
): Promise<Cell[]> {
  const apps = new Map<Kind, { appKey: string; appId: string }>();
  for (const kind of ['slide', 'click', 'select'] as const) apps.set(kind, await imageApp(h.api, kind));
  const cells: Cell[] = [];
  for (const solver of solvers) {
    const count = typeof n === 'number' ? n : n(solver);
    const attempts: Attempt[] = [];
    const shared = solver.role === 'escalation';
    // The escalation row: its own app (default tiers, fresh counts), one address, one init after another.
    const app = shared ? await imageApp(h.api, solver.kind, 'default') : apps.get(solver.kind)!;
    const index = SOLVERS.indexOf(solver);
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const rng = seededRandom(`${options.seed ?? 'adversarial'}:${solver.id}:${i}`);
        attempts.push(await attempt(h, app, solver, rng, shared ? addressFor(255, 0) : addressFor(index, i)));
      }
    };
    await Promise.all(Array.from({ length: shared ? 1 : (options.concurrency ?? 2) }, worker));
    const cell = { solver, attempts };
    options.onCell?.(cell);
    cells.push(cell);
  }
  return cells;
}

/** Wilson score interval (95 %) for k successes in n: what a sample of this size can and cannot show. */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.96;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const m = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - m), Math.min(1, c + m)];
}

const pct = (v: number) => `${Math.round(v * 100)} %`;

/** A Markdown table of the cells: passes, location hits, 95 % interval, goal. */
export function table(cells: readonly Cell[]): string {
  const rows = cells.map(({ solver, attempts }) => {
    // Outside the escalation row a refused init is no result (it would mean addresses leaked between attempts).
    const ran = attempts.filter((a) => !a.error && (solver.role === 'escalation' || !a.refused));
    const k = ran.filter((a) => a.passed).length;
    const first = ran.filter((a) => a.passedFirst).length;
    const loc = ran.filter((a) => a.located).length;
    const [lo, hi] = wilson(k, ran.length);
    const goal = {
      scripted: '≤ 5 %',
      open: '≤ 5 % (not met: open)',
      control: '≥ 95 %',
      info: 'info',
      escalation: `per init: ${ran.filter((a) => a.refused).length} refused, ${ran.filter((a) => a.tier === 'hard').length} hard`,
    }[solver.role];
    const errors = attempts.length - ran.length;
    return `| ${solver.kind} | ${solver.label} | ${k}/${ran.length}${errors ? ` (+${errors} broken or refused)` : ''} | ${solver.kind === 'slide' ? `${first}/${ran.length}` : 'same'} | ${solver.locator === 'oracle' ? 'given' : `${loc}/${ran.length}`} | ${pct(lo)}–${pct(hi)} | ${goal} |`;
  });
  return [
    '| type | solver | passed (all attempts) | on the first | answer located | 95 % interval of the pass rate | goal |',
    '|---|---|---:|---:|---:|---|---|',
    ...rows,
  ].join('\n');
}

export { sleep };
