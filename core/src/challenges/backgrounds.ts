import type { Canvas, ImageData, SKRSContext2D } from '@napi-rs/canvas';
import { canvas as napiCanvas } from './canvas.ts';
import { chance, int, type Random, range } from './random.ts';

/**
 * How busy a background is. `full` is what the main API serves: every image different, with enough
 * clutter and noise that a stored gallery or a plain edge detector is of little use. `simple` is for the
 * standby service, which must stay cheap while it carries the load alone: a gradient and a few blobs.
 */
export type Detail = 'full' | 'simple';

export interface BackgroundOptions {
  width: number;
  height: number;
  detail: Detail;
  /** Lightness range of the base gradient, in %; select tiles ask for pale backgrounds so colours read. */
  lightness?: readonly [number, number];
  /** Saturation range of everything drawn, in %. */
  saturation?: readonly [number, number];
}

const hsl = (h: number, s: number, l: number, a = 1): string =>
  `hsl(${Math.round(h)} ${Math.round(s)}% ${Math.round(l)}% / ${a.toFixed(2)})`;

/**
 * The smooth layers (base gradient and blobs) are drawn at 1/SMOOTH_SCALE of the size and scaled up: they
 * hold no edges, so the upscaled picture is the same to the eye, for a sixteenth of the gradient pixels
 * (rasterising the blobs' radial gradients at full size was a fifth of a slide's drawing).
 */
const SMOOTH_SCALE = 4;
const smallCanvases = new Map<string, Canvas>();

/** A small canvas per size, reused by every image this thread draws (always painted over entirely). */
function smallCanvas(width: number, height: number): Canvas {
  const key = `${width}x${height}`;
  let canvas = smallCanvases.get(key);
  if (!canvas) {
    canvas = napiCanvas().createCanvas(width, height);
    smallCanvases.set(key, canvas);
  }
  return canvas;
}

/**
 * Paints a procedurally generated background over the canvas (from the current origin). Noise is left to
 * the caller, which adds it last so that it also covers symbols and gaps.
 */
export function drawBackground(ctx: SKRSContext2D, rng: Random, o: BackgroundOptions): void {
  const [lMin, lMax] = o.lightness ?? [42, 72];
  const [sMin, sMax] = o.saturation ?? [30, 65];
  const sat = (): number => range(rng, sMin, sMax);
  const hue = range(rng, 0, 360);
  const small = smallCanvas(Math.ceil(o.width / SMOOTH_SCALE), Math.ceil(o.height / SMOOTH_SCALE));
  const sctx = small.getContext('2d');
  sctx.setTransform(1 / SMOOTH_SCALE, 0, 0, 1 / SMOOTH_SCALE, 0, 0);
  const coveredW = small.width * SMOOTH_SCALE;
  const coveredH = small.height * SMOOTH_SCALE;

  // 1. Base: a linear gradient between two hues at a random angle, over all of the small canvas.
  const angle = range(rng, 0, Math.PI);
  const dx = (Math.cos(angle) * o.width) / 2;
  const dy = (Math.sin(angle) * o.height) / 2;
  const base = sctx.createLinearGradient(
    o.width / 2 - dx,
    o.height / 2 - dy,
    o.width / 2 + dx,
    o.height / 2 + dy,
  );
  base.addColorStop(0, hsl(hue, sat(), range(rng, lMin, lMax)));
  base.addColorStop(1, hsl(hue + range(rng, 60, 200), sat(), range(rng, lMin, lMax)));
  sctx.fillStyle = base;
  sctx.fillRect(0, 0, coveredW, coveredH);

  // 2. Soft blobs: radial gradients fading to transparent, so regions differ in colour without hard edges.
  const blobs = o.detail === 'full' ? int(rng, 6, 10) : int(rng, 2, 4);
  for (let i = 0; i < blobs; i++) {
    const x = range(rng, 0, o.width);
    const y = range(rng, 0, o.height);
    const r = range(rng, 0.15, 0.45) * Math.max(o.width, o.height);
    const h = range(rng, 0, 360);
    const s = sat();
    const l = range(rng, lMin - 5, lMax + 5);
    const g = sctx.createRadialGradient(x, y, 0, x, y, r);
    g.addColorStop(0, hsl(h, s, l, range(rng, 0.35, 0.6)));
    g.addColorStop(1, hsl(h, s, l, 0));
    sctx.fillStyle = g;
    // Only the blob's square: the gradient is transparent beyond r.
    sctx.fillRect(x - r, y - r, 2 * r, 2 * r);
  }
  ctx.drawImage(small, 0, 0, coveredW, coveredH);
  if (o.detail === 'simple') return;

  // 3. Clutter: translucent irregular polygons and ellipses. Irregular on purpose, so clutter is never
  //    mistaken for one of the symbols a prompt asks for.
  const clutter = int(rng, 10, 16);
  // Centre and turn are applied here rather than by translate/rotate: four canvas calls fewer per shape.
  for (let i = 0; i < clutter; i++) {
    const cx = range(rng, 0, o.width);
    const cy = range(rng, 0, o.height);
    const turn = range(rng, 0, Math.PI * 2);
    ctx.beginPath();
    const size = range(rng, 8, 0.25 * Math.min(o.width, o.height) + 8);
    if (chance(rng, 0.4)) {
      ctx.ellipse(cx, cy, size, size * range(rng, 0.3, 0.8), turn, 0, Math.PI * 2);
    } else {
      const n = int(rng, 4, 7);
      for (let k = 0; k < n; k++) {
        const a = (k / n) * Math.PI * 2 + range(rng, -0.3, 0.3) + turn;
        const rr = size * range(rng, 0.45, 1);
        ctx.lineTo(cx + Math.cos(a) * rr, cy + Math.sin(a) * rr);
      }
      ctx.closePath();
    }
    ctx.fillStyle = hsl(range(rng, 0, 360), sat(), range(rng, lMin - 10, lMax + 10), range(rng, 0.12, 0.3));
    ctx.fill();
  }
}

/**
 * Curved lines across the image. They cross symbols and gap edges so that contour tracing and simple
 * edge detectors see many false edges; humans look past them.
 */
export function drawDistractorLines(
  ctx: SKRSContext2D,
  rng: Random,
  width: number,
  height: number,
  count: number,
): void {
  for (let i = 0; i < count; i++) {
    ctx.beginPath();
    ctx.moveTo(range(rng, -20, width * 0.3), range(rng, 0, height));
    ctx.bezierCurveTo(
      range(rng, 0, width),
      range(rng, -height * 0.3, height * 1.3),
      range(rng, 0, width),
      range(rng, -height * 0.3, height * 1.3),
      range(rng, width * 0.7, width + 20),
      range(rng, 0, height),
    );
    ctx.lineWidth = range(rng, 1, 2.5);
    ctx.strokeStyle = hsl(range(rng, 0, 360), range(rng, 30, 70), range(rng, 25, 85), range(rng, 0.35, 0.7));
    ctx.stroke();
  }
}

/** Noise amplitude (± grey levels at mid-grey) the full-detail images use. */
export const NOISE_AMPLITUDE = 12;

/** An opaque grey pixel as one 32-bit word, whatever the byte order: RGBA in memory is R G B A. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const OPAQUE = LITTLE_ENDIAN ? 0xff000000 : 0xff;
const GREY = LITTLE_ENDIAN ? 0x010101 : 0x01010100;

/** A scratch canvas and pixel buffer per size, reused by every image this thread draws (see addNoise). */
const scratches = new Map<string, { canvas: Canvas; data: ImageData; pixels: Uint32Array }>();

function scratch(width: number, height: number) {
  const key = `${width}x${height}`;
  let s = scratches.get(key);
  if (!s) {
    const canvas = napiCanvas().createCanvas(width, height);
    const data = new (napiCanvas().ImageData)(width, height);
    s = { canvas, data, pixels: new Uint32Array(data.data.buffer) };
    scratches.set(key, s);
  }
  return s;
}

/**
 * Adds grey per-pixel noise of about ±amplitude, fresh for every image (never a stored texture: no two
 * images share a noise pattern to difference out). Pixel-exact templates and difference tricks stop
 * working. The noise is a grey layer around mid-grey blended with `overlay` (a mid-tone moves by up to
 * ±amplitude, darker and lighter tones by less), drawn through a reused scratch canvas: Skia blends it in
 * one pass, where reading the canvas back, adding in JavaScript and writing it again cost three times as
 * much. The stream comes from a xorshift seeded by `rng`: its values need no secrecy (the attacker sees the
 * pixels) and a crypto draw per pixel is slow.
 */
export function addNoise(
  ctx: SKRSContext2D,
  rng: Random,
  width: number,
  height: number,
  amplitude: number,
): void {
  const { canvas, data, pixels } = scratch(width, height);
  const span = 2 * amplitude + 1;
  let s = (Math.floor(rng.next() * 0xffffffff) | 1) >>> 0;
  for (let i = 0; i < pixels.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    // The top 16 bits scaled to 0..span-1: a modulo of a uint32 runs in floating point, five times slower.
    const g = 128 - amplitude + (((s >>> 16) * span) >>> 16);
    pixels[i] = OPAQUE | (g * GREY);
  }
  canvas.getContext('2d').putImageData(data, 0, 0);
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.globalCompositeOperation = 'overlay';
  ctx.drawImage(canvas, 0, 0);
  ctx.restore();
}
