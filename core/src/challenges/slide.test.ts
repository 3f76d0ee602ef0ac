import { describe, expect, it } from 'vitest';
import { seededRandom } from './random.ts';
import {
  generateSlide,
  PIECE_SIZE,
  SLIDE_HEIGHT,
  SLIDE_TOLERANCE_PX,
  SLIDE_WIDTH,
  type SlideChallenge,
  TRACK_MAX,
  verifySlide,
} from './slide.ts';
import { decode, hasSignature, jsonPart, luma, type Pixels } from './test-images.ts';
import { humanDrag, humanKeys, linearDrag } from './test-trajectories.ts';

const seeds = Array.from({ length: 12 }, (_, i) => `slide-${i}`);
const challenges: SlideChallenge[] = await Promise.all(seeds.map((s) => generateSlide(seededRandom(s))));

/** The piece's interior: opaque pixels at least 3 px from any transparent one (skips the rim). */
function interior(piece: Pixels): Array<[number, number]> {
  const opaque = (x: number, y: number) =>
    x >= 0 &&
    y >= 0 &&
    x < piece.width &&
    y < piece.height &&
    (piece.data[(y * piece.width + x) * 4 + 3] as number) === 255;
  const out: Array<[number, number]> = [];
  for (let y = 0; y < piece.height; y++) {
    for (let x = 0; x < piece.width; x++) {
      if ([-3, 0, 3].every((dx) => [-3, 0, 3].every((dy) => opaque(x + dx, y + dy)))) out.push([x, y]);
    }
  }
  return out;
}

/** Mean luma of the background under the piece's interior at (x, y), over the piece's own. */
function darkening(bg: Pixels, piece: Pixels, x: number, y: number): number {
  let under = 0;
  let own = 0;
  for (const [px, py] of interior(piece)) {
    under += luma(bg, x + px, y + py);
    own += luma(piece, px, py);
  }
  return under / own;
}

/**
 * The template-match solver: the x along the piece's row where the background best correlates with the piece's
 * interior (normalised cross-correlation, so a darkened or brightened copy still scores 1).
 */
function bestCorrelation(bg: Pixels, piece: Pixels, y: number): number {
  const pts = interior(piece);
  const p = pts.map(([px, py]) => luma(piece, px, py));
  const pm = p.reduce((a, v) => a + v, 0) / p.length;
  let best = -1;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let x = 0; x <= TRACK_MAX; x++) {
    const b = pts.map(([px, py]) => luma(bg, x + px, y + py));
    const bm = b.reduce((a, v) => a + v, 0) / b.length;
    let num = 0;
    let den = 0;
    for (let k = 0; k < b.length; k++) {
      num += ((p[k] as number) - pm) * ((b[k] as number) - bm);
      den += ((b[k] as number) - bm) ** 2;
    }
    const score = num / Math.sqrt(den || 1);
    if (score > bestScore) [best, bestScore] = [x, score];
  }
  return best;
}

/**
 * Luma just inside the body's edges near its corners (where tabs never are), over luma just outside:
 * below 1 where a gap's inner shadow is.
 */
function edgeShade(bg: Pixels, x: number, y: number): number {
  const PAD = 12;
  const BODY = 40;
  let inside = 0;
  let outside = 0;
  for (const [cx, cy, ox, oy] of [
    [0, 0, -1, -1],
    [BODY, 0, 1, -1],
    [BODY, BODY, 1, 1],
    [0, BODY, -1, 1],
  ] as const) {
    for (let k = 1; k <= 8; k++) {
      // Along both edges from the corner: 3 px in, and 5 px out.
      for (const [ax, ay] of [
        [-ox * k, 0],
        [0, -oy * k],
      ] as const) {
        const px = x + PAD + cx + ax;
        const py = y + PAD + cy + ay;
        inside += luma(bg, px - ox * 3 * (ax === 0 ? 1 : 0), py - oy * 3 * (ay === 0 ? 1 : 0));
        outside += luma(bg, px + ox * 5 * (ax === 0 ? 1 : 0), py + oy * 5 * (ay === 0 ? 1 : 0));
      }
    }
  }
  return inside / outside;
}

describe('generateSlide', () => {
  it('returns a JPEG background and a transparent WebP piece of the documented sizes, under 30 KB together', async () => {
    for (const { view } of challenges) {
      expect([view.background.mime, view.piece.mime]).toEqual(['image/jpeg', 'image/webp']);
      expect(hasSignature(view.background) && hasSignature(view.piece)).toBe(true);
      const [bg, piece] = await Promise.all([decode(view.background), decode(view.piece)]);
      expect([bg.width, bg.height]).toEqual([SLIDE_WIDTH, SLIDE_HEIGHT]);
      expect([piece.width, piece.height]).toEqual([PIECE_SIZE, PIECE_SIZE]);
      // The piece keeps its transparency (JPEG has none): its corners show the background through it.
      expect(piece.data[3]).toBe(0);
      expect([view.background.width, view.piece.width]).toEqual([SLIDE_WIDTH, PIECE_SIZE]);
      expect(view.background.data.length + view.piece.data.length).toBeLessThan(30 * 1024);
    }
  });

  it('puts the gap where the answer says: the inside of the body edges is shaded there', async () => {
    for (const { view, answer } of challenges) {
      const bg = await decode(view.background);
      expect(answer.y).toBe(view.pieceY);
      expect(edgeShade(bg, answer.x, answer.y)).toBeLessThan(0.6);
      // Not anywhere: 30 px off (inside the picture), the same measure finds no gap.
      expect(edgeShade(bg, answer.x > 100 ? answer.x - 30 : answer.x + 30, answer.y)).toBeGreaterThan(0.6);
    }
  });

  it("draws exactly two holes, both on the piece's row and a piece apart: the real one and a decoy", async () => {
    for (const { view, answer } of challenges) {
      const bg = await decode(view.background);
      // Every x along the row whose body edges are shaded inside, grouped into runs.
      const runs: number[][] = [];
      for (let x = 0; x <= TRACK_MAX; x++) {
        if (edgeShade(bg, x, view.pieceY) >= 0.6) continue;
        const last = runs.at(-1);
        if (last && x - (last.at(-1) as number) <= 2) last.push(x);
        else runs.push([x]);
      }
      const centres = runs.map((r) => r[Math.floor(r.length / 2)] as number);
      expect(centres).toHaveLength(2);
      const [real, decoy] = [...centres].sort((a, b) => Math.abs(a - answer.x) - Math.abs(b - answer.x));
      expect(Math.abs((real as number) - answer.x)).toBeLessThanOrEqual(2);
      expect(Math.abs((decoy as number) - answer.x)).toBeGreaterThanOrEqual(PIECE_SIZE + 8 - 2);
    }
  });

  it("resists a template match: the gap does not hold the piece's pixels, so correlating them along the row rarely lands on it", async () => {
    let found = 0;
    for (const { view, answer } of challenges) {
      const [bg, piece] = await Promise.all([decode(view.background), decode(view.piece)]);
      if (Math.abs(bestCorrelation(bg, piece, answer.y) - answer.x) <= SLIDE_TOLERANCE_PX) found++;
    }
    // Chance alone: two gaps on the row, 11 of 161 positions within tolerance of the real one.
    expect(found).toBeLessThanOrEqual(3);
  });

  it('places the gap clear of the resting piece and inside the track', () => {
    for (const { answer } of challenges) {
      expect(answer.x).toBeGreaterThanOrEqual(PIECE_SIZE);
      expect(answer.x).toBeLessThanOrEqual(TRACK_MAX);
      expect(answer.y + PIECE_SIZE).toBeLessThanOrEqual(SLIDE_HEIGHT);
    }
  });

  it('leaks nothing but pieceY: the JSON part of every view is the same apart from it', () => {
    const strip = ({ view }: SlideChallenge) => {
      const json = jsonPart(view) as Record<string, unknown>;
      expect(json.pieceY).toBe(view.pieceY);
      delete json.pieceY;
      return json;
    };
    const first = strip(challenges[0] as SlideChallenge);
    for (const c of challenges) expect(strip(c)).toEqual(first);
    expect(Object.keys(first).sort()).toEqual([
      'a11y',
      'background',
      'keyboard',
      'kind',
      'piece',
      'prompt',
      'track',
    ]);
  });

  it('keeps the answer small, for sealing', () => {
    for (const { answer } of challenges) expect(JSON.stringify(answer).length).toBeLessThan(200);
  });

  it('is deterministic for a seeded source, and varies between seeds', async () => {
    const again = await generateSlide(seededRandom(seeds[0] as string));
    expect(again.answer).toEqual(challenges[0]?.answer);
    expect(new Set(challenges.map((c) => c.answer.x)).size).toBeGreaterThan(6);
  });

  it('has a cheaper simple variant with the same view shape', async () => {
    const simple = await generateSlide(seededRandom('simple'), { detail: 'simple' });
    expect(Object.keys(simple.view).sort()).toEqual(Object.keys(challenges[0]?.view ?? {}).sort());
    expect(simple.view.background.data.length).toBeLessThan(challenges[0]?.view.background.data.length ?? 0);
    const [bg, piece] = await Promise.all([decode(simple.view.background), decode(simple.view.piece)]);
    expect(darkening(bg, piece, simple.answer.x, simple.answer.y)).toBeLessThan(0.7);
  });

  it('encodes PNG or lossy WebP on request', async () => {
    const png = await generateSlide(seededRandom('png'), { format: 'png' });
    expect([png.view.background.mime, png.view.piece.mime]).toEqual(['image/png', 'image/png']);
    expect(hasSignature(png.view.background) && hasSignature(png.view.piece)).toBe(true);
    const webp = await generateSlide(seededRandom('png'), { format: 'webp' });
    expect([webp.view.background.mime, webp.view.piece.mime]).toEqual(['image/webp', 'image/webp']);
    expect(hasSignature(webp.view.background) && hasSignature(webp.view.piece)).toBe(true);
  });
});

describe('verifySlide', () => {
  const answer = { x: 150, y: 40 };
  const submit = (x: number, input: 'pointer' | 'touch' | 'keyboard' = 'pointer', seed = 'v') => ({
    x,
    input,
    trajectory: input === 'keyboard' ? humanKeys(seededRandom(seed), x) : humanDrag(seededRandom(seed), x),
  });

  it('accepts a human-like drag onto the gap, within the tolerance either side', () => {
    expect(verifySlide(answer, submit(150))).toEqual({ ok: true });
    expect(verifySlide(answer, submit(150 + SLIDE_TOLERANCE_PX, 'touch'))).toEqual({ ok: true });
    expect(verifySlide(answer, submit(150 - SLIDE_TOLERANCE_PX))).toEqual({ ok: true });
  });

  it('accepts a keyboard-only solution', () => {
    const s = submit(150, 'keyboard');
    expect(Math.abs(s.x - 150)).toBeLessThanOrEqual(2);
    expect(verifySlide(answer, s)).toEqual({ ok: true });
  });

  it('step 3: refuses a human-like drag that misses the gap', () => {
    expect(verifySlide(answer, submit(150 + SLIDE_TOLERANCE_PX + 1))).toEqual({
      ok: false,
      reason: 'position',
    });
    expect(verifySlide(answer, submit(90))).toEqual({ ok: false, reason: 'position' });
  });

  it('step 2: refuses an instant straight-line drag onto the gap', () => {
    const trajectory = linearDrag(seededRandom(1), 150, { durationMs: 30 });
    expect(verifySlide(answer, { x: 150, input: 'pointer', trajectory })).toEqual({
      ok: false,
      reason: 'too_fast',
    });
  });

  it('step 2: refuses a slow straight line at constant speed onto the gap', () => {
    const trajectory = linearDrag(seededRandom(1), 150, { durationMs: 900 });
    expect(verifySlide(answer, { x: 150, input: 'pointer', trajectory })).toMatchObject({ ok: false });
  });

  it('step 1: refuses malformed submissions', () => {
    const good = submit(150);
    for (const bad of [
      null,
      'x=150',
      {},
      { ...good, x: '150' },
      { ...good, x: Number.NaN },
      { ...good, x: Number.POSITIVE_INFINITY },
      { ...good, input: 'mouse' },
      { ...good, trajectory: [{ t: -1, x: 0, y: 0 }] },
      { ...good, trajectory: Array.from({ length: 2000 }, (_, t) => ({ t, x: 0, y: 0 })) },
    ]) {
      expect(verifySlide(answer, bad)).toEqual({ ok: false, reason: 'malformed' });
    }
  });
});
