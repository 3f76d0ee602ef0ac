import type { SKRSContext2D } from '@napi-rs/canvas';
import { z } from 'zod';
import {
  addNoise,
  type Detail,
  drawBackground,
  drawDistractorLines,
  NOISE_AMPLITUDE,
} from './backgrounds.ts';
import { encodeCanvas, reusableCanvas } from './image.ts';
import { int, type Random, range, sample } from './random.ts';
import {
  drawSymbol,
  type Placed,
  placeCircles,
  SHAPES,
  type Shape,
  type SymbolStyle,
  symbolLook,
  vividColour,
} from './shapes.ts';
import { ACCEPT, type EncodedImage, type ImageFormat, type Prompt, reject, type Verdict } from './types.ts';

export const CLICK_WIDTH = 300;
export const CLICK_HEIGHT = 200;
/** Prompt strip: one slot per target, a chevron between slots to show the order. */
const SLOT = 40;
const CHEVRON = 16;
/** A click counts when it lands within the symbol's radius plus this slack, in px. */
export const CLICK_SLACK_PX = 4;
/** A person needs time to read the prompt and find the first symbol, then to move between symbols. */
export const CLICK_TIMING = { minFirstMs: 500, minIntervalMs: 150, maxTotalMs: 120_000 } as const;

export interface ClickView {
  kind: 'click';
  /** `challenge.click.prompt` with `{ count }`: "click the symbols shown, in this order". */
  prompt: Prompt;
  image: EncodedImage;
  /** The symbols to click, left to right, as dark silhouettes (never their names: names would leak). */
  promptImage: EncodedImage;
  /** Keyboard users move a crosshair by these steps (px) and press Enter or Space to click. */
  keyboard: { step: number; largeStep: number };
  a11y: { labelKey: string; instructionsKey: string };
}
/** Target centres and accepted radii, in click order, in image px. */
export interface ClickAnswer {
  targets: Array<{ x: number; y: number; r: number }>;
}
export interface ClickChallenge {
  kind: 'click';
  view: ClickView;
  answer: ClickAnswer;
}
export interface ClickOptions {
  detail?: Detail;
  format?: ImageFormat;
}

/** Places 4–6 distinct symbols without overlap, shrinking them when they do not fit. */
function layout(rng: Random, count: number): Placed[] {
  for (let maxR = 24; ; maxR -= 2) {
    const radii = Array.from({ length: count }, () => range(rng, Math.max(12, maxR - 8), maxR));
    const placed = placeCircles(rng, { width: CLICK_WIDTH, height: CLICK_HEIGHT }, radii, 8);
    if (placed) return placed;
  }
}

/** Rec. 601 luma (0–255) of an HSL colour (h in degrees, s and l in %). */
function hslLuma(h: number, s: number, l: number): number {
  const k = (n: number) => (n + h / 30) % 12;
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const f = (n: number) => 255 * (l / 100 - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1)));
  return 0.299 * f(0) + 0.587 * f(8) + 0.114 * f(4);
}
const hsl = (h: number, s: number, l: number): string =>
  `hsl(${Math.round(h % 360)} ${Math.round(s)}% ${Math.round(l)}%)`;

/**
 * A scene symbol's fill in full detail: two colours apart in hue and at least 70 apart in luma (so the
 * stripes read without colour vision too), in stripes at a random angle and pitch, and a broken outline.
 * A person sees a striped shape against the soft background; a silhouette template, which looks for a
 * uniform patch, scores the stripes as clutter.
 */
function texturedLook(rng: Random, r: number): Pick<SymbolStyle, 'fill' | 'stripes' | 'dash'> {
  const light = range(rng, 0, 1) < 0.5;
  const hue = range(rng, 0, 360);
  const sat = range(rng, 60, 90);
  const l1 = light ? range(rng, 65, 78) : range(rng, 24, 36);
  let hue2 = 0;
  let sat2 = 0;
  let l2 = 0;
  for (let i = 0; i < 20; i++) {
    hue2 = hue + range(rng, 90, 270);
    sat2 = range(rng, 60, 90);
    l2 = light ? range(rng, 22, 34) : range(rng, 65, 80);
    if (Math.abs(hslLuma(hue, sat, l1) - hslLuma(hue2 % 360, sat2, l2)) >= 70) break;
    if (i === 19) l2 = light ? 12 : 90;
  }
  const period = range(rng, 5, Math.max(6, r / 3));
  return {
    fill: hsl(hue, sat, l1),
    stripes: {
      colour: hsl(hue2, sat2, l2),
      angle: range(rng, 0, Math.PI),
      period,
      width: period * range(rng, 0.4, 0.6),
    },
    dash: [range(rng, 5, 9), range(rng, 2, 4)],
  };
}

/** A small left-pointing-right chevron between prompt slots. */
function chevron(ctx: SKRSContext2D, x: number, y: number): void {
  ctx.beginPath();
  ctx.moveTo(x - 3, y - 5);
  ctx.lineTo(x + 3, y);
  ctx.lineTo(x - 3, y + 5);
  ctx.lineWidth = 2;
  ctx.strokeStyle = '#777';
  ctx.stroke();
}

/** Generates a click challenge: symbols on a busy image, and the ones to click in order. */
export async function generateClick(rng: Random, options: ClickOptions = {}): Promise<ClickChallenge> {
  const detail = options.detail ?? 'full';
  const format = options.format ?? 'jpeg';
  const canvas = reusableCanvas('picture', CLICK_WIDTH, CLICK_HEIGHT);
  const ctx = canvas.getContext('2d');
  drawBackground(ctx, rng, { width: CLICK_WIDTH, height: CLICK_HEIGHT, detail });

  // 1. Symbols: distinct shapes, so "the star" is never ambiguous; colour and rotation random.
  const shapes = sample(rng, SHAPES, int(rng, 6, 8));
  const spots = layout(rng, shapes.length);
  shapes.forEach((shape, i) => {
    const s = spots[i] as Placed;
    const full = detail === 'full';
    const look = full ? texturedLook(rng, s.r) : { fill: vividColour(rng) };
    drawSymbol(ctx, {
      shape,
      x: s.x,
      y: s.y,
      r: s.r,
      rotation: range(rng, 0, Math.PI * 2),
      stroke: range(rng, 0, 1) < 0.5 ? 'rgba(255,255,255,0.85)' : 'rgba(20,20,20,0.75)',
      ...look,
      ...(full ? symbolLook(rng) : {}),
    });
  });
  // 2. Lines over the symbols and noise over everything: contour tracing sees broken, grainy outlines.
  if (detail === 'full') {
    drawDistractorLines(ctx, rng, CLICK_WIDTH, CLICK_HEIGHT, int(rng, 3, 5));
    addNoise(ctx, rng, CLICK_WIDTH, CLICK_HEIGHT, NOISE_AMPLITUDE);
  }

  // 3. Targets: 2–4 of the symbols, in random order, drawn as silhouettes at a fresh rotation.
  const order = sample(rng, [...shapes.keys()], int(rng, 3, 4));
  const prompt = reusableCanvas('prompt', order.length * SLOT + (order.length - 1) * CHEVRON, SLOT);
  const pctx = prompt.getContext('2d');
  pctx.fillStyle = '#f4f4f4';
  pctx.fillRect(0, 0, prompt.width, prompt.height);
  order.forEach((idx, i) => {
    const left = i * (SLOT + CHEVRON);
    if (i > 0) chevron(pctx, left - CHEVRON / 2, SLOT / 2);
    drawSymbol(pctx, {
      shape: shapes[idx] as Shape,
      x: left + SLOT / 2,
      y: SLOT / 2,
      r: SLOT / 2 - 4,
      rotation: range(rng, 0, Math.PI * 2),
      fill: '#2b2b2b',
      stroke: '#2b2b2b',
      lineWidth: 1,
    });
  });

  const image = encodeCanvas(canvas, format);
  const promptImage = encodeCanvas(prompt, format);
  return {
    kind: 'click',
    view: {
      kind: 'click',
      prompt: { key: 'challenge.click.prompt', params: { count: order.length } },
      image,
      promptImage,
      keyboard: { step: 5, largeStep: 25 },
      a11y: { labelKey: 'challenge.click.label', instructionsKey: 'challenge.click.keyboardHelp' },
    },
    answer: {
      targets: order.map((idx) => {
        const s = spots[idx] as Placed;
        return { x: Math.round(s.x), y: Math.round(s.y), r: Math.round(s.r + CLICK_SLACK_PX) };
      }),
    },
  };
}

export const clickSubmissionSchema = z
  .array(z.object({ x: z.number(), y: z.number(), /** ms since the image was shown */ t: z.number().min(0) }))
  .max(12);
export type ClickSubmission = z.infer<typeof clickSubmissionSchema>;

/** Accepts only the right symbols, in the right order, at a pace a person can click. */
export function verifyClick(answer: ClickAnswer, clicks: unknown): Verdict {
  // 1. Well-formed, with timestamps that never go backwards.
  const parsed = clickSubmissionSchema.safeParse(clicks);
  if (!parsed.success) return reject('malformed');
  const list = parsed.data;
  for (let i = 1; i < list.length; i++) if (list[i]!.t < list[i - 1]!.t) return reject('malformed');
  // 2. As many clicks as targets (the widget lets the user undo before submitting).
  if (list.length !== answer.targets.length) return reject('count');
  // 3. Plausible timing: time to find the first symbol, time to move between symbols, not stale.
  if (list[0]!.t < CLICK_TIMING.minFirstMs) return reject('too_fast');
  for (let i = 1; i < list.length; i++) {
    if (list[i]!.t - list[i - 1]!.t < CLICK_TIMING.minIntervalMs) return reject('too_fast');
  }
  if (list[list.length - 1]!.t > CLICK_TIMING.maxTotalMs) return reject('too_slow');
  // 4. Each click inside its own target; a click on another target is an order mistake.
  const hits = (c: { x: number; y: number }, t: { x: number; y: number; r: number }): boolean =>
    Math.hypot(c.x - t.x, c.y - t.y) <= t.r;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if (hits(c, answer.targets[i]!)) continue;
    return reject(answer.targets.some((t) => hits(c, t)) ? 'order' : 'position');
  }
  return ACCEPT;
}
