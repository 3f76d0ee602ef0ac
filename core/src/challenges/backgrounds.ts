import type { SKRSContext2D } from '@napi-rs/canvas';
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
 * Paints a procedurally generated background over the canvas (from the current origin). Noise is left to
 * the caller, which adds it last so that it also covers symbols and gaps.
 */
export function drawBackground(ctx: SKRSContext2D, rng: Random, o: BackgroundOptions): void {
  const [lMin, lMax] = o.lightness ?? [42, 72];
  const [sMin, sMax] = o.saturation ?? [30, 65];
  const sat = (): number => range(rng, sMin, sMax);
  const hue = range(rng, 0, 360);

  // 1. Base: a linear gradient between two hues at a random angle.
  const angle = range(rng, 0, Math.PI);
  const dx = (Math.cos(angle) * o.width) / 2;
  const dy = (Math.sin(angle) * o.height) / 2;
  const base = ctx.createLinearGradient(
    o.width / 2 - dx,
    o.height / 2 - dy,
    o.width / 2 + dx,
    o.height / 2 + dy,
  );
  base.addColorStop(0, hsl(hue, sat(), range(rng, lMin, lMax)));
  base.addColorStop(1, hsl(hue + range(rng, 60, 200), sat(), range(rng, lMin, lMax)));
  ctx.fillStyle = base;
  ctx.fillRect(0, 0, o.width, o.height);

  // 2. Soft blobs: radial gradients fading to transparent, so regions differ in colour without hard edges.
  const blobs = o.detail === 'full' ? int(rng, 6, 10) : int(rng, 2, 4);
  for (let i = 0; i < blobs; i++) {
    const x = range(rng, 0, o.width);
    const y = range(rng, 0, o.height);
    const r = range(rng, 0.15, 0.45) * Math.max(o.width, o.height);
    const h = range(rng, 0, 360);
    const s = sat();
    const l = range(rng, lMin - 5, lMax + 5);
    const g = ctx.createRadialGradient(x, y, 0, x, y, r);
    g.addColorStop(0, hsl(h, s, l, range(rng, 0.35, 0.6)));
    g.addColorStop(1, hsl(h, s, l, 0));
    ctx.fillStyle = g;
    ctx.fillRect(0, 0, o.width, o.height);
  }
  if (o.detail === 'simple') return;

  // 3. Clutter: translucent irregular polygons and ellipses. Irregular on purpose, so clutter is never
  //    mistaken for one of the symbols a prompt asks for.
  const clutter = int(rng, 10, 16);
  for (let i = 0; i < clutter; i++) {
    ctx.save();
    ctx.translate(range(rng, 0, o.width), range(rng, 0, o.height));
    ctx.rotate(range(rng, 0, Math.PI * 2));
    ctx.beginPath();
    const size = range(rng, 8, 0.25 * Math.min(o.width, o.height) + 8);
    if (chance(rng, 0.4)) {
      ctx.ellipse(0, 0, size, size * range(rng, 0.3, 0.8), 0, 0, Math.PI * 2);
    } else {
      const n = int(rng, 4, 7);
      for (let k = 0; k < n; k++) {
        const a = (k / n) * Math.PI * 2 + range(rng, -0.3, 0.3);
        const rr = size * range(rng, 0.45, 1);
        ctx.lineTo(Math.cos(a) * rr, Math.sin(a) * rr);
      }
      ctx.closePath();
    }
    ctx.fillStyle = hsl(range(rng, 0, 360), sat(), range(rng, lMin - 10, lMax + 10), range(rng, 0.12, 0.3));
    ctx.fill();
    ctx.restore();
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

/** Noise amplitude (± grey levels) the full-detail images use. */
export const NOISE_AMPLITUDE = 12;

/**
 * Adds grey per-pixel noise of ±amplitude. Pixel-exact templates and difference tricks stop working, and
 * lossy WebP still compresses it well at the sizes we serve. The noise stream comes from a xorshift seeded
 * by `rng`: its values need no secrecy (the attacker sees the pixels) and a crypto draw per pixel is slow.
 */
export function addNoise(
  ctx: SKRSContext2D,
  rng: Random,
  width: number,
  height: number,
  amplitude: number,
): void {
  const img = ctx.getImageData(0, 0, width, height);
  const d = img.data;
  let s = (Math.floor(rng.next() * 0xffffffff) | 1) >>> 0;
  for (let i = 0; i < d.length; i += 4) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const n = (((s >>> 0) / 4294967296) * 2 - 1) * amplitude;
    // Uint8ClampedArray clamps to 0..255 on assignment.
    d[i] = (d[i] as number) + n;
    d[i + 1] = (d[i + 1] as number) + n;
    d[i + 2] = (d[i + 2] as number) + n;
  }
  ctx.putImageData(img, 0, 0);
}
