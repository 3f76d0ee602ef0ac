import { createCanvas } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './random.ts';
import {
  decoyOutline,
  HolePlacement,
  outlineTransforms,
  type PieceSides,
  piecePath,
  type Side,
} from './slide-holes.ts';

const SIDES: Side[] = ['out', 'in', 'flat'];
/** Every side list the slide draws (a tab or a blank on at least three sides). */
const ALL: PieceSides[] = SIDES.flatMap((a) =>
  SIDES.flatMap((b) => SIDES.flatMap((c) => SIDES.map((d) => [a, b, c, d] as const))),
).filter((s) => s.filter((x) => x !== 'flat').length >= 3);
const sorted = (s: PieceSides) => [...s].sort().join();
const differ = (a: PieceSides, b: PieceSides) => a.filter((s, i) => s !== b[i]).length;

describe('outlineTransforms', () => {
  it("gives the eight turns and mirror images, each with the piece's own sides", () => {
    const piece: PieceSides = ['out', 'in', 'flat', 'out'];
    const all = outlineTransforms(piece);
    expect(all).toHaveLength(8);
    expect(all[0]).toEqual(piece);
    // A quarter turn clockwise: the left side comes to the top.
    expect(all[1]).toEqual(['out', 'out', 'in', 'flat']);
    // The mirror image swaps left and right.
    expect(all[4]).toEqual(['out', 'out', 'flat', 'in']);
    for (const t of all) expect(sorted(t)).toBe(sorted(piece));
  });
});

describe('decoyOutline', () => {
  it("is always another arrangement of the piece's own sides (same tabs, so same area and perimeter)", () => {
    const rng = seededRandom('decoy');
    let none = 0;
    for (const piece of ALL) {
      for (let k = 0; k < 20; k++) {
        const decoy = decoyOutline(rng, piece);
        if (!decoy) {
          none++;
          // Only a piece with four alike sides has no other arrangement.
          expect(new Set(piece).size).toBe(1);
          break;
        }
        expect(sorted(decoy)).toBe(sorted(piece));
        expect(differ(decoy, piece)).toBeGreaterThanOrEqual(2);
        expect(outlineTransforms(piece).some((t) => t.every((s, i) => s === decoy[i]))).toBe(true);
      }
    }
    expect(none).toBe(2); // all tabs, all blanks
  });

  it('uses every other arrangement of an asymmetric piece', () => {
    const rng = seededRandom('spread');
    const seen = new Set<string>();
    for (let k = 0; k < 200; k++) seen.add(decoyOutline(rng, ['out', 'in', 'flat', 'out'])?.join() ?? '');
    expect(seen.size).toBe(7);
  });
});

describe('HolePlacement', () => {
  const placement = new HolePlacement(72, 232, 72);

  it('makes every x equally likely for the real hole (a blind guess stays at the tolerance over 161)', () => {
    for (let x = 72; x <= 232; x++) expect(placement.marginal(x) * 161).toBeCloseTo(1, 5);
  });

  it('keeps both holes in range and a piece apart, and neither side tells which is real', () => {
    const rng = seededRandom('place');
    let realLeft = 0;
    const bad: unknown[] = [];
    const n = 20_000;
    for (let k = 0; k < n; k++) {
      const pair = placement.draw(rng);
      const { x, decoyX } = pair;
      if (Math.abs(x - decoyX) < 72 || Math.min(x, decoyX) < 72 || Math.max(x, decoyX) > 232) bad.push(pair);
      if (x < decoyX) realLeft++;
    }
    expect(bad).toEqual([]);
    // Symmetric weights: the real hole is the left one half the time (4 standard deviations: 0.5 ± 0.014).
    expect(Math.abs(realLeft / n - 0.5)).toBeLessThan(0.014);
  });

  it('draws the same pair for the same random numbers', () => {
    expect(placement.draw(seededRandom(3))).toEqual(placement.draw(seededRandom(3)));
  });
});

describe('piecePath', () => {
  /** The outline filled on a 64 px canvas, turned by `quarter` quarter turns and mirrored if asked. */
  function raster(sides: PieceSides, quarter = 0, mirror = false): Uint8ClampedArray {
    const c = createCanvas(64, 64);
    const ctx = c.getContext('2d');
    ctx.translate(32, 32);
    // The canvas applies the last transform first: this turns the outline, then mirrors it.
    if (mirror) ctx.scale(-1, 1);
    ctx.rotate((quarter * Math.PI) / 2);
    ctx.translate(-32, -32);
    ctx.fillStyle = '#000';
    ctx.fill(piecePath(sides));
    return ctx.getImageData(0, 0, 64, 64).data;
  }
  const differentPixels = (a: Uint8ClampedArray, b: Uint8ClampedArray) => {
    let n = 0;
    for (let i = 3; i < a.length; i += 4) if (Math.abs((a[i] as number) - (b[i] as number)) > 128) n++;
    return n;
  };

  it("draws each decoy arrangement as the piece's own outline turned or mirrored, pixel for pixel", () => {
    const piece: PieceSides = ['out', 'in', 'flat', 'out'];
    const all = outlineTransforms(piece);
    const area = raster(piece).filter((v, i) => i % 4 === 3 && v > 128).length;
    for (let k = 0; k < 8; k++) {
      const drawn = raster(all[k] as PieceSides);
      const expected = raster(piece, k % 4, k >= 4);
      expect([k, differentPixels(drawn, expected)]).toEqual([k, expect.toSatisfy((d: number) => d <= 4)]);
      expect(drawn.filter((v, i) => i % 4 === 3 && v > 128).length).toBeCloseTo(area, -1);
    }
    // And an arrangement that differs does differ on the canvas: a tab is about 100 px.
    expect(differentPixels(raster(all[1] as PieceSides), raster(piece))).toBeGreaterThan(150);
  });
});
