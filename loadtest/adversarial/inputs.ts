/**
 * How the harness's solvers move the widget's controls in Chromium: the scripted inputs of the solver
 * ladder, the replay of recorded trajectories, and the human-like control. Positions are in image px;
 * `scale` turns them into CSS px. Nothing here knows the answer: the caller passes the target.
 */
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { int, type Random, range } from '../../core/src/challenges/random.ts';
import { humanDrag, humanKeys } from '../../core/src/challenges/test-trajectories.ts';
import type { TrajectoryPoint } from '../../core/src/challenges/trajectory.ts';
import { personSlide } from './human-model.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The slide's handle centre once it stopped moving. */
async function handleCentre(handle: Locator): Promise<{ x: number; y: number }> {
  let last = await handle.boundingBox();
  for (let i = 0; i < 30; i++) {
    await sleep(50);
    const now = await handle.boundingBox();
    if (now && last && now.x === last.x && now.y === last.y)
      return { x: now.x + now.width / 2, y: now.y + now.height / 2 };
    last = now;
  }
  throw new Error('the slide handle never stopped moving');
}

/**
 * Plays a trajectory (t in ms, x and y in image px from the handle) with the mouse in real time, each event
 * stamped with the trajectory's own time as an input device stamps it (Chromium's Input.dispatchMouseEvent
 * `timestamp`, which becomes the event's timeStamp). A process that stalls on a busy machine then delays
 * delivery, as a busy page does a person's events, but never reshapes the drag the widget records.
 */
export async function playDrag(page: Page, handle: Locator, points: TrajectoryPoint[], scale: number) {
  const o = await handleCentre(handle);
  const cdp = await page.context().newCDPSession(page);
  try {
    const mouse = (
      type: 'mousePressed' | 'mouseMoved' | 'mouseReleased',
      at: { x: number; y: number },
      ms: number,
      buttons: number,
    ) =>
      cdp.send('Input.dispatchMouseEvent', {
        type,
        x: at.x,
        y: at.y,
        button: 'left',
        buttons,
        clickCount: type === 'mouseMoved' ? 0 : 1,
        timestamp: (epoch + ms) / 1000,
      });
    await page.mouse.move(o.x, o.y);
    const t0 = points[0]?.t ?? 0;
    const epoch = Date.now();
    await mouse('mousePressed', o, 0, 1);
    let last = o;
    for (const p of points) {
      const wait = epoch + (p.t - t0) - Date.now();
      if (wait > 0) await sleep(wait);
      last = { x: o.x + p.x * scale, y: o.y + p.y * scale };
      await mouse('mouseMoved', last, p.t - t0, 1);
    }
    const end = (points[points.length - 1]?.t ?? t0) - t0 + 40;
    await sleep(Math.max(0, epoch + end - Date.now()));
    await mouse('mouseReleased', last, end, 0);
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Straight line at constant speed, 16 ms samples, on a rail. */
export function straightDrag(_rng: Random, x: number): TrajectoryPoint[] {
  const duration = 600;
  const points: TrajectoryPoint[] = [];
  for (let t = 0; t <= duration; t += 16) points.push({ t, x: (x * t) / duration, y: 0 });
  points.push({ t: duration, x, y: 0 });
  return points;
}

/** The jitter script: a straight line with ±2 px jitter on both axes and 10–24 ms sampling. */
export function jitterDrag(rng: Random, x: number): TrajectoryPoint[] {
  const duration = range(rng, 500, 1200);
  const points: TrajectoryPoint[] = [{ t: 0, x: 0, y: 0 }];
  for (let t = range(rng, 10, 24); t < duration; t += range(rng, 10, 24))
    points.push({ t, x: (x * t) / duration + range(rng, -2, 2), y: range(rng, -2, 2) });
  points.push({ t: duration, x, y: range(rng, -2, 2) });
  return points;
}

/** Drops the piece at x in a single move. */
export async function instantDrop(page: Page, handle: Locator, x: number, scale: number) {
  const o = await handleCentre(handle);
  await page.mouse.move(o.x, o.y);
  await page.mouse.down();
  await page.mouse.move(o.x + x * scale, o.y, { steps: 1 });
  await page.mouse.up();
}

interface Recorded {
  /** How the set was made (see record.ts). */
  source: string;
  trajectories: TrajectoryPoint[][];
}
let recorded: Recorded | undefined;
export function recordedTrajectories(): Recorded {
  recorded ??= JSON.parse(readFileSync(new URL('trajectories.json', import.meta.url), 'utf8')) as Recorded;
  return recorded;
}

/**
 * Replay: one recorded drag, stretched to the target x, its timing scaled by 0.85–1.15 and ±0.7 px of
 * noise on each sample (so no two replays are byte-identical).
 */
export function replayDrag(rng: Random, x: number): TrajectoryPoint[] {
  const set = recordedTrajectories().trajectories;
  const base = set[int(rng, 0, set.length - 1)] as TrajectoryPoint[];
  const end = (base[base.length - 1] as TrajectoryPoint).x || 1;
  const k = x / end;
  const time = range(rng, 0.85, 1.15);
  const out = base.map((p, i) => ({
    t: p.t * time,
    x: i === 0 ? p.x * k : p.x * k + range(rng, -0.7, 0.7),
    y: p.y + range(rng, -0.7, 0.7),
  }));
  (out[out.length - 1] as TrajectoryPoint).x = x;
  return out;
}

/** The human-like control: minimum-jerk drag with tremor, drift and over- or undershoot (core's model). */
export function humanLikeDrag(rng: Random, x: number): TrajectoryPoint[] {
  return humanDrag(rng, x, { durationMs: range(rng, 700, 2200), overshootPx: range(rng, -8, 8) });
}

/**
 * The person model of human-model.ts aiming at the gap at x: where the eye puts a piece turned by the
 * middle of its range, off by the hand's precision, with core's eased drag.
 */
export function personDrag(rng: Random, x: number): TrajectoryPoint[] {
  return personSlide(rng, { x, y: 0 }, 22.5).trajectory;
}

/** Key presses: each a key and the wait before it. Enter confirms at the end. */
export type KeyScript = Array<{ key: string; waitMs: number }>;

/** Shift+ArrowRight by large steps, then ArrowRight by small steps, to the nearest reachable x. */
function stepsTo(x: number, large: number, small: number): string[] {
  const keys: string[] = [];
  for (let i = 0; i < Math.floor(x / large); i++) keys.push('Shift+ArrowRight');
  for (let i = 0; i < Math.round((x % large) / small); i++) keys.push('ArrowRight');
  return keys;
}

export function fixedKeys(_rng: Random, x: number): KeyScript {
  return [...stepsTo(x, 20, 4), 'Enter'].map((key) => ({ key, waitMs: 60 }));
}
export function randomKeys(rng: Random, x: number): KeyScript {
  return [...stepsTo(x, 20, 4), 'Enter'].map((key) => ({ key, waitMs: range(rng, 60, 140) }));
}
/** Keyboard with human timing: core's model of a person (tapped or held large steps, a look, small taps). */
export function humanTimedKeys(rng: Random, x: number): KeyScript {
  const points = humanKeys(rng, x);
  const script: KeyScript = [];
  let prev = { t: 0, x: 0 };
  for (const p of points) {
    const dx = p.x - prev.x;
    if (dx === 0) script.push({ key: 'Enter', waitMs: p.t - prev.t });
    else {
      const key = Math.abs(dx) >= 20 ? 'Shift+ArrowRight' : 'ArrowRight';
      script.push({ key: dx < 0 ? key.replace('Right', 'Left') : key, waitMs: p.t - prev.t });
    }
    prev = p;
  }
  if (script[script.length - 1]?.key !== 'Enter') script.push({ key: 'Enter', waitMs: range(rng, 250, 900) });
  return script;
}

export async function playKeys(page: Page, handle: Locator, script: KeyScript) {
  await handle.focus();
  let prev = Date.now();
  for (const { key, waitMs } of script) {
    const wait = waitMs - (Date.now() - prev);
    if (wait > 0) await sleep(wait);
    prev = Date.now();
    await page.keyboard.press(key);
  }
}

/** Clicks at points on `stage` (image px) the way a person would: a look first, then one at a time. */
export async function humanClicks(
  page: Page,
  stage: Locator,
  width: number,
  at: Array<{ x: number; y: number }>,
  rng: Random,
  jitter = 1.5,
) {
  const box = await stage.boundingBox();
  if (!box) throw new Error('no stage');
  const scale = box.width / width;
  await sleep(range(rng, 700, 1400));
  for (const p of at) {
    await page.mouse.move(
      box.x + p.x * scale + range(rng, -jitter, jitter),
      box.y + p.y * scale + range(rng, -jitter, jitter),
      {
        steps: int(rng, 6, 12),
      },
    );
    await sleep(range(rng, 60, 160));
    await page.mouse.down();
    await sleep(range(rng, 50, 110));
    await page.mouse.up();
    await sleep(range(rng, 250, 600));
  }
}

/**
 * The control dropped imprecisely: the same drag aimed at x plus Gaussian error of `sd` px. The model's own
 * drag ends exactly on the target, which no hand does; this row shows what the tolerance costs a person
 * whose drop spreads by `sd` (an assumption, not a measurement: real people are needed for that).
 */
export function imprecise(
  input: (rng: Random, x: number) => TrajectoryPoint[],
  sd: number,
): (rng: Random, x: number) => TrajectoryPoint[] {
  return (rng, x) => {
    // Box-Muller from two uniform draws of the seeded source.
    const u = Math.max(rng.next(), 1e-9);
    const error = sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
    return input(rng, Math.round((x + error) * 10) / 10);
  };
}
