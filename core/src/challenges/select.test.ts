import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './random.ts';
import {
  generateSelect,
  planSelect,
  SELECT_SIZE,
  SELECT_TILES,
  type SelectChallenge,
  TILE,
  verifySelect,
} from './select.ts';
import { COLOUR_NAMES, NAMED_COLOURS, NAMED_TURN_DEG, namedTurn, SHAPES } from './shapes.ts';
import { decode, hasSignature, jsonPart, type Pixels } from './test-images.ts';

const challenges: SelectChallenge[] = await Promise.all(
  Array.from({ length: 10 }, (_, i) => generateSelect(seededRandom(`select-${i}`))),
);

const rgb = (hex: string): [number, number, number] =>
  [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];

/** Pixels in a tile within RGB distance 45 of the colour (measured: matching tiles 130–1200, others 0). */
function countColour(p: Pixels, tile: (typeof SELECT_TILES)[number], hex: string): number {
  const [r, g, b] = rgb(hex);
  let n = 0;
  for (let y = tile.y; y < tile.y + TILE; y++) {
    for (let x = tile.x; x < tile.x + TILE; x++) {
      const i = (y * p.width + x) * 4;
      if (
        Math.hypot((p.data[i] as number) - r, (p.data[i + 1] as number) - g, (p.data[i + 2] as number) - b) <
        45
      )
        n++;
    }
  }
  return n;
}

describe('planSelect', () => {
  it('property: exactly the answer tiles match the category, and 2–4 of them', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const plan = planSelect(seededRandom(seed), 0.35);
        expect(plan.indices.length).toBeGreaterThanOrEqual(2);
        expect(plan.indices.length).toBeLessThanOrEqual(4);
        expect([...plan.indices].sort((a, b) => a - b)).toEqual(plan.indices);
        plan.symbols.forEach((syms, i) => {
          const c = plan.category;
          const matches = syms.some((s) =>
            c.type === 'shape' ? s.shape === c.shape : s.fill === NAMED_COLOURS[c.colour],
          );
          expect(matches).toBe(plan.indices.includes(i));
          if (c.type === 'colour') {
            // Colour prompts: only the three far-apart named colours appear anywhere in the grid.
            for (const s of syms) expect(Object.values(NAMED_COLOURS)).toContain(s.fill);
          }
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe('generateSelect', () => {
  it('returns one decodable grid image under 30 KB, with nine addressable tiles inside it', async () => {
    for (const { view } of challenges) {
      expect(hasSignature(view.image)).toBe(true);
      const img = await decode(view.image);
      expect([img.width, img.height]).toEqual([SELECT_SIZE, SELECT_SIZE]);
      expect(view.image.data.length).toBeLessThan(30 * 1024);
      expect(view.tiles.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      for (const t of view.tiles) {
        expect(t.x + t.width).toBeLessThanOrEqual(SELECT_SIZE);
        expect(t.y + t.height).toBeLessThanOrEqual(SELECT_SIZE);
        expect(t.label).toEqual({
          key: 'challenge.select.tile',
          params: { row: Math.floor(t.index / 3) + 1, column: (t.index % 3) + 1 },
        });
      }
    }
  });

  it('leaks nothing: apart from the prompt, the JSON part of every view is the same', () => {
    const strip = ({ view }: SelectChallenge) => {
      const { prompt, ...rest } = jsonPart(view) as {
        prompt: { key: string; params: Record<string, string> };
      };
      if (prompt.key === 'challenge.select.prompt.shape') expect(SHAPES).toContain(prompt.params.shape);
      else expect(COLOUR_NAMES).toContain(prompt.params.colour);
      expect(Object.keys(prompt.params)).toHaveLength(1);
      return rest;
    };
    const first = strip(challenges[0] as SelectChallenge);
    for (const c of challenges) expect(strip(c)).toEqual(first);
  });

  it('asks for shapes only by default (colour prompts fall to pixel counting)', () => {
    for (const { view } of challenges) expect(view.prompt.key).toBe('challenge.select.prompt.shape');
  });

  it('draws the named colour on the matching tiles only (colour prompts, when asked for)', async () => {
    let checked = 0;
    for (let i = 0; checked < 6; i++) {
      const c = await generateSelect(seededRandom(`colour-${i}`), { colourShare: 0.35 });
      const colour = c.view.prompt.params.colour as keyof typeof NAMED_COLOURS | undefined;
      if (!colour) continue;
      checked++;
      const img = await decode(c.view.image);
      for (const tile of SELECT_TILES) {
        const n = countColour(img, tile, NAMED_COLOURS[colour]);
        if (c.answer.indices.includes(tile.index)) expect(n).toBeGreaterThan(80);
        else expect(n).toBeLessThan(10);
      }
    }
  });

  it('keeps the answer small, for sealing', () => {
    for (const { answer } of challenges) expect(JSON.stringify(answer).length).toBeLessThan(200);
  });
});

describe('verifySelect', () => {
  const answer = { indices: [1, 4, 8] };

  it('accepts exactly the matching set, in any order', () => {
    expect(verifySelect(answer, [1, 4, 8])).toEqual({ ok: true });
    expect(verifySelect(answer, [8, 1, 4])).toEqual({ ok: true });
  });

  it('step 1: refuses malformed input', () => {
    for (const bad of [null, '1,4,8', [1, 4, 4, 8], [1, 4, 9], [-1], [1.5], [1, 2, 3, 4, 5, 6, 7, 8, 0, 1]]) {
      expect(verifySelect(answer, bad)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('step 2: refuses a missing or an extra tile', () => {
    expect(verifySelect(answer, [1, 4])).toEqual({ ok: false, reason: 'selection' });
    expect(verifySelect(answer, [1, 4, 8, 0])).toEqual({ ok: false, reason: 'selection' });
    expect(verifySelect(answer, [])).toEqual({ ok: false, reason: 'selection' });
  });

  it('property: every other subset of the nine tiles is refused', () => {
    fc.assert(
      fc.property(fc.subarray([0, 1, 2, 3, 4, 5, 6, 7, 8]), (set) => {
        fc.pre(set.join() !== '1,4,8');
        expect(verifySelect(answer, set)).toEqual({ ok: false, reason: 'selection' });
      }),
    );
  });
});

describe('named shapes stay readable', () => {
  it('a square, a cross or a heart is turned at most NAMED_TURN_DEG from upright; other shapes any way', () => {
    const rng = seededRandom('turns');
    const widest = new Map<string, number>();
    for (const shape of SHAPES)
      for (let i = 0; i < 2000; i++) {
        const deg = Math.abs((namedTurn(rng, shape) * 180) / Math.PI);
        widest.set(shape, Math.max(widest.get(shape) ?? 0, deg));
      }
    for (const [shape, deg] of widest) {
      const limit = NAMED_TURN_DEG[shape as keyof typeof NAMED_TURN_DEG];
      if (limit === undefined) expect(deg, shape).toBeGreaterThan(300);
      else expect(deg, shape).toBeLessThanOrEqual(limit);
    }
    // And as drawn: every symbol of the grids above, with the turn it was drawn at.
    for (const c of challenges)
      for (const tile of c.drawn)
        for (const { shape, rotation } of tile) {
          const limit = NAMED_TURN_DEG[shape];
          if (limit !== undefined)
            expect(Math.abs((rotation * 180) / Math.PI), shape).toBeLessThanOrEqual(limit);
        }
    expect(challenges.flatMap((c) => c.drawn.flat()).length).toBeGreaterThan(9 * challenges.length);
  });
});
