import type { SKRSContext2D } from '@napi-rs/canvas';
import { type Random, range } from './random.ts';

/**
 * The symbols the click and select challenges draw. None is a rotation of another (no "diamond", which is a
 * turned square), so a prompt is never ambiguous; where a prompt names one, it is turned only as far as it
 * still reads as its name (NAMED_TURN_DEG).
 */
export const SHAPES = [
  'circle',
  'triangle',
  'square',
  'pentagon',
  'star',
  'heart',
  'arrow',
  'cross',
  'moon',
] as const;
export type Shape = (typeof SHAPES)[number];

/**
 * Named colours for "tiles with a red shape". Three hues far apart in both hue and lightness, so the
 * common colour-vision deficiencies still tell them apart (red reads darker than yellow to protanopes and
 * deuteranopes, blue stays distinct for all three kinds).
 */
export const NAMED_COLOURS = {
  red: '#d7263d',
  blue: '#1f5fd1',
  yellow: '#f5c400',
} as const;
export type ColourName = keyof typeof NAMED_COLOURS;
export const COLOUR_NAMES = Object.keys(NAMED_COLOURS) as ColourName[];

export interface SymbolStyle {
  shape: Shape;
  x: number;
  y: number;
  /** Radius of the circle the symbol fits in, in px. */
  r: number;
  /** Radians. */
  rotation: number;
  fill: string;
  stroke: string;
  lineWidth?: number;
  /**
   * Lighting and distortion (scene symbols; never prompt silhouettes): a gradient from white to black at
   * `light.alpha` across the symbol from `light.angle`, and a stretch and shear. A person still reads the
   * shape; a uniform-fill template scores a gradient as clutter and an undistorted one misaligns.
   */
  light?: { angle: number; alpha: number };
  warp?: { sx: number; sy: number; shear: number };
  /**
   * Stripes of a second colour over the fill (click's scene symbols): the shape reads as a textured region
   * to a person, while its inside is no longer the uniform patch a silhouette template scores.
   */
  stripes?: { colour: string; angle: number; period: number; width: number };
  /** A broken outline (dash and gap lengths, px): no closed contour of one colour to trace. */
  dash?: number[];
}

/**
 * Degrees either way from upright a shape may be turned where the prompt names it: further, a square reads
 * as a diamond, a cross as an x, and a heart stops reading as one. Absent: any turn reads as its name.
 */
export const NAMED_TURN_DEG: Partial<Record<Shape, number>> = { square: 15, cross: 15, heart: 30 };

/** A turn in radians for a symbol the prompt names (one draw of `rng`, whatever the shape). */
export function namedTurn(rng: Random, shape: Shape): number {
  const limit = NAMED_TURN_DEG[shape];
  return limit === undefined ? range(rng, 0, Math.PI * 2) : (range(rng, -limit, limit) * Math.PI) / 180;
}

/** Random lighting and distortion for a scene symbol (see SymbolStyle). */
export function symbolLook(rng: Random): Pick<SymbolStyle, 'light' | 'warp'> {
  return {
    light: { angle: range(rng, 0, Math.PI * 2), alpha: range(rng, 0.25, 0.4) },
    warp: { sx: range(rng, 0.88, 1.12), sy: range(rng, 0.88, 1.12), shear: range(rng, -0.15, 0.15) },
  };
}

/** Appends a regular polygon (or star when `inner` is given) around the origin. */
function polygon(ctx: SKRSContext2D, r: number, points: number, inner?: number): void {
  const steps = inner === undefined ? points : points * 2;
  for (let i = 0; i < steps; i++) {
    const radius = inner !== undefined && i % 2 === 1 ? r * inner : r;
    const a = -Math.PI / 2 + (i * 2 * Math.PI) / steps;
    const px = Math.cos(a) * radius;
    const py = Math.sin(a) * radius;
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.closePath();
}

/** Appends a closed path through the given unit-scale points. */
function outline(ctx: SKRSContext2D, r: number, pts: ReadonlyArray<readonly [number, number]>): void {
  pts.forEach(([px, py], i) => {
    if (i === 0) ctx.moveTo(px * r, py * r);
    else ctx.lineTo(px * r, py * r);
  });
  ctx.closePath();
}

const ARROW: ReadonlyArray<readonly [number, number]> = [
  [-0.95, -0.28],
  [0.15, -0.28],
  [0.15, -0.7],
  [0.95, 0],
  [0.15, 0.7],
  [0.15, 0.28],
  [-0.95, 0.28],
];
const CROSS: ReadonlyArray<readonly [number, number]> = [
  [-0.3, -0.9],
  [0.3, -0.9],
  [0.3, -0.3],
  [0.9, -0.3],
  [0.9, 0.3],
  [0.3, 0.3],
  [0.3, 0.9],
  [-0.3, 0.9],
  [-0.3, 0.3],
  [-0.9, 0.3],
  [-0.9, -0.3],
  [-0.3, -0.3],
];

/** Appends the shape's path, centred on the origin and fitting in a circle of radius r. */
export function traceShape(ctx: SKRSContext2D, shape: Shape, r: number): void {
  switch (shape) {
    case 'circle':
      ctx.arc(0, 0, r * 0.85, 0, Math.PI * 2);
      return;
    case 'triangle':
      // A triangle's centroid sits low; shift it so it looks centred in its circle.
      ctx.save();
      ctx.translate(0, r * 0.1);
      polygon(ctx, r, 3);
      ctx.restore();
      return;
    case 'square':
      polygon(ctx, r * 0.95, 4);
      return;
    case 'pentagon':
      polygon(ctx, r * 0.95, 5);
      return;
    case 'star':
      polygon(ctx, r, 5, 0.45);
      return;
    case 'heart':
      ctx.moveTo(0, r * 0.85);
      ctx.bezierCurveTo(-r * 1.25, 0, -r * 0.65, -r * 1.05, 0, -r * 0.42);
      ctx.bezierCurveTo(r * 0.65, -r * 1.05, r * 1.25, 0, 0, r * 0.85);
      ctx.closePath();
      return;
    case 'arrow':
      outline(ctx, r, ARROW);
      return;
    case 'cross':
      outline(ctx, r, CROSS);
      return;
    case 'moon':
      // Outer arc of the full disc, inner arc of an offset disc: a crescent.
      ctx.arc(0, 0, r * 0.9, Math.PI * 0.3, Math.PI * 1.7);
      ctx.arc(r * 0.42, 0, r * 0.72, Math.PI * 1.55, Math.PI * 0.45, true);
      ctx.closePath();
      return;
  }
}

/** Draws one filled and outlined symbol. */
export function drawSymbol(ctx: SKRSContext2D, s: SymbolStyle): void {
  ctx.save();
  ctx.translate(s.x, s.y);
  ctx.rotate(s.rotation);
  if (s.warp) ctx.transform(s.warp.sx, 0, s.warp.shear, s.warp.sy, 0, 0);
  ctx.beginPath();
  traceShape(ctx, s.shape, s.r);
  ctx.fillStyle = s.fill;
  ctx.fill();
  if (s.stripes) {
    ctx.save();
    ctx.clip();
    ctx.rotate(s.stripes.angle);
    ctx.fillStyle = s.stripes.colour;
    const reach = s.r * 1.6;
    for (let x = -reach; x < reach; x += s.stripes.period)
      ctx.fillRect(x, -reach, s.stripes.width, 2 * reach);
    ctx.restore();
  }
  if (s.light) {
    const dx = Math.cos(s.light.angle) * s.r;
    const dy = Math.sin(s.light.angle) * s.r;
    const g = ctx.createLinearGradient(-dx, -dy, dx, dy);
    g.addColorStop(0, `rgba(255, 255, 255, ${s.light.alpha.toFixed(2)})`);
    g.addColorStop(1, `rgba(0, 0, 0, ${s.light.alpha.toFixed(2)})`);
    ctx.fillStyle = g;
    ctx.fill();
  }
  if (s.dash) ctx.setLineDash(s.dash);
  ctx.lineJoin = 'round';
  ctx.lineWidth = s.lineWidth ?? Math.max(1.5, s.r / 9);
  ctx.strokeStyle = s.stroke;
  ctx.stroke();
  ctx.restore();
}

/** A saturated colour for a foreground symbol, avoiding muddy mid-lightness greys. */
export function vividColour(rng: Random): string {
  const h = Math.round(range(rng, 0, 360));
  return `hsl(${h} ${Math.round(range(rng, 60, 90))}% ${Math.round(range(rng, 40, 58))}%)`;
}

export interface Placed {
  x: number;
  y: number;
  r: number;
}

/**
 * Rejection-samples `count` non-overlapping circles inside the box (keeping `margin` px between them and
 * from the edges). Returns null when it cannot fit them, so the caller retries with smaller radii.
 */
export function placeCircles(
  rng: Random,
  box: { width: number; height: number },
  radii: readonly number[],
  margin: number,
): Placed[] | null {
  const placed: Placed[] = [];
  for (const r of radii) {
    let ok = false;
    for (let attempt = 0; attempt < 200 && !ok; attempt++) {
      const x = range(rng, r + margin, box.width - r - margin);
      const y = range(rng, r + margin, box.height - r - margin);
      ok = placed.every((p) => Math.hypot(p.x - x, p.y - y) >= p.r + r + margin);
      if (ok) placed.push({ x, y, r });
    }
    if (!ok) return null;
  }
  return placed;
}
