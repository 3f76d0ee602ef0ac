/**
 * The slide's outlines, where its two holes go and what the decoy looks like. Kept
 * apart from the drawing because these are the properties a solver exploits first: a decoy of another
 * outline (a different count of tabs, another area), a decoy off the piece's row, or a placement whose
 * statistics tell which of the two holes is the real one.
 */
import type { Path2D } from '@napi-rs/canvas';
import { canvas } from './canvas.ts';
import { pick, type Random } from './random.ts';

/** Body of the puzzle piece (a square), the tab radius, and the padding that holds a tab. */
export const BODY = 40;
const TAB_R = 7;
const TAB_OFFSET = 4;
export const PAD = 12;

/** Each side of the piece: a tab out, a blank in, or flat. Order: top, right, bottom, left (clockwise). */
export type Side = 'out' | 'in' | 'flat';
export type PieceSides = readonly [Side, Side, Side, Side];

/**
 * The puzzle-piece outline with its top-left padding corner at the origin, as a Path2D: built once per
 * piece and reused for every fill, clip and stroke (translated), instead of being traced anew through
 * dozens of canvas calls each time.
 */
export function piecePath(sides: PieceSides): Path2D {
  const path = new (canvas().Path2D)();
  const half = Math.sqrt(TAB_R ** 2 - TAB_OFFSET ** 2); // half the tab's opening on the edge
  const corners = [
    [0, 0],
    [BODY, 0],
    [BODY, BODY],
    [0, BODY],
  ] as const;
  path.moveTo(PAD, PAD);
  // Each side in its own frame (edge along +x, outside towards -y, turned by a quarter per side),
  // walking clockwise; `at` maps a point of that frame to the canvas.
  sides.forEach((side, i) => {
    const [cx, cy] = corners[i] as readonly [number, number];
    const turn = (i * Math.PI) / 2;
    const cos = Math.round(Math.cos(turn));
    const sin = Math.round(Math.sin(turn));
    const at = (u: number, v: number): [number, number] => [
      PAD + cx + u * cos - v * sin,
      PAD + cy + u * sin + v * cos,
    ];
    if (side !== 'flat') {
      const out = side === 'out';
      const centreY = out ? -TAB_OFFSET : TAB_OFFSET;
      path.lineTo(...at(BODY / 2 - half, 0));
      const [ax, ay] = at(BODY / 2, centreY);
      path.arc(
        ax,
        ay,
        TAB_R,
        Math.atan2(-centreY, -half) + turn,
        Math.atan2(-centreY, half) + turn,
        !out, // a tab bulges outward going clockwise, a blank inward going anticlockwise
      );
    }
    path.lineTo(...at(BODY, 0));
  });
  path.closePath();
  return path;
}

/**
 * The eight turns and mirror images of a piece's outline, as side lists. Tabs sit in the middle of
 * their side, so a quarter turn moves each side to the next and a left-right mirror swaps left and
 * right: the result has the piece's own tabs, area and perimeter, in another arrangement.
 */
export function outlineTransforms(sides: PieceSides): PieceSides[] {
  const turns = [0, 1, 2, 3].map((k) => sides.map((_, i) => sides[(i - k + 4) % 4]) as unknown as PieceSides);
  const mirror = (s: PieceSides): PieceSides => [s[0], s[3], s[2], s[1]];
  return [...turns, ...turns.map(mirror)];
}

const same = (a: PieceSides, b: PieceSides) => a.every((s, i) => s === b[i]);

/**
 * The decoy's outline: the piece's own, turned by a quarter, a half or three quarters or mirrored, so
 * that it differs from the piece's arrangement (on two sides at least: a rearrangement never differs on
 * one). Nothing but the arrangement tells the two holes apart: not the number of tabs, the area or the
 * perimeter. `undefined` when every transform is the piece itself (all four sides alike).
 */
export function decoyOutline(rng: Random, sides: PieceSides): PieceSides | undefined {
  const others = outlineTransforms(sides).filter((t) => !same(t, sides));
  // Each distinct arrangement once, so a symmetric piece does not favour one of them.
  const distinct = others.filter((t, i) => others.findIndex((u) => same(u, t)) === i);
  if (distinct.length === 0) return undefined;
  return pick(rng, distinct);
}

/**
 * Places the real hole and the decoy on the row, at least `gap` apart, both in `min..max`:
 * the pair is drawn from a symmetric distribution and the real one is either of the two with
 * probability one half, so the positions say nothing about which is real; the weights are scaled
 * (symmetric Sinkhorn) so that every position is equally likely for the real hole, which keeps a blind
 * guess at 7 of the 161 positions.
 */
export class HolePlacement {
  readonly min: number;
  readonly count: number;
  private readonly cumulative: Float64Array;

  constructor(min: number, max: number, gap: number) {
    this.min = min;
    const n = max - min + 1;
    this.count = n;
    const allowed = (i: number, j: number) => Math.abs(i - j) >= gap;
    // d such that d_i * sum_j A_ij d_j = 1 for every i: the matrix d_i A_ij d_j has equal row sums.
    let d = new Float64Array(n).fill(1);
    for (let iter = 0; iter < 500; iter++) {
      const next = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < n; j++) if (allowed(i, j)) s += d[j] as number;
        next[i] = Math.sqrt((d[i] as number) / s);
      }
      d = next;
    }
    this.cumulative = new Float64Array(n * n);
    let total = 0;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        if (allowed(i, j)) total += (d[i] as number) * (d[j] as number);
        this.cumulative[i * n + j] = total;
      }
    for (let k = 0; k < n * n; k++) (this.cumulative[k] as number) /= total;
  }

  /** The probability that the real hole is at `x` (for tests: equal for every x). */
  marginal(x: number): number {
    const i = x - this.min;
    const row = i * this.count;
    return (
      (this.cumulative[row + this.count - 1] as number) - (row > 0 ? (this.cumulative[row - 1] as number) : 0)
    );
  }

  /** An ordered pair: the real hole's x, then the decoy's. */
  draw(rng: Random): { x: number; decoyX: number } {
    const u = rng.next();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cumulative[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return { x: this.min + Math.floor(lo / this.count), decoyX: this.min + (lo % this.count) };
  }
}
