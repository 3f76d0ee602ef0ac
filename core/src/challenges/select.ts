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
import { chance, int, pick, type Random, range, sample } from './random.ts';
import {
  COLOUR_NAMES,
  type ColourName,
  drawSymbol,
  NAMED_COLOURS,
  namedTurn,
  type Placed,
  placeCircles,
  SHAPES,
  type Shape,
  symbolLook,
  vividColour,
} from './shapes.ts';
import { ACCEPT, type EncodedImage, type ImageFormat, type Prompt, reject, type Verdict } from './types.ts';

export const GRID = 3;
export const TILE = 96;
export const TILE_GAP = 6;
export const SELECT_SIZE = GRID * TILE + (GRID - 1) * TILE_GAP;

/** What the matching tiles share. Shape prompts work without colour vision; colour prompts use three hues
 * far apart (see NAMED_COLOURS). */
export type SelectCategory = { type: 'shape'; shape: Shape } | { type: 'colour'; colour: ColourName };

export interface SelectTile {
  index: number;
  /** The tile's rectangle in the grid image, in px, for a button per tile. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** `challenge.select.tile` with `{ row, column }` (1-based): position only, never content. */
  label: Prompt;
}
export interface SelectView {
  kind: 'select';
  /** `challenge.select.prompt.shape` `{ shape }` or `challenge.select.prompt.colour` `{ colour }`. */
  prompt: Prompt;
  image: EncodedImage;
  tiles: SelectTile[];
  a11y: { labelKey: string; instructionsKey: string };
}
/** Indices (0–8, row by row) of the matching tiles, ascending. */
export interface SelectAnswer {
  indices: number[];
}
export interface SelectChallenge {
  kind: 'select';
  view: SelectView;
  answer: SelectAnswer;
  /** What each tile shows (shapes and turns), for tests and benches; never sent or sealed. */
  drawn: Array<Array<{ shape: Shape; rotation: number }>>;
}
export interface SelectOptions {
  detail?: Detail;
  format?: ImageFormat;
  /** Share of colour prompts, 0–1; default DEFAULT_COLOUR_SHARE (none). */
  colourShare?: number;
}

/** The fixed tile rectangles: layout is public, only the contents vary. */
export const SELECT_TILES: readonly SelectTile[] = Array.from({ length: GRID * GRID }, (_, index) => {
  const row = Math.floor(index / GRID);
  const column = index % GRID;
  return {
    index,
    x: column * (TILE + TILE_GAP),
    y: row * (TILE + TILE_GAP),
    width: TILE,
    height: TILE,
    label: { key: 'challenge.select.tile', params: { row: row + 1, column: column + 1 } },
  };
});

/** Chooses each symbol's shape and colour for one tile, so that it matches the category iff `match`. */
function tileSymbols(
  rng: Random,
  cat: SelectCategory,
  match: boolean,
): Array<{ shape: Shape; fill: string }> {
  const n = int(rng, 1, 2);
  if (cat.type === 'shape') {
    const others = SHAPES.filter((s) => s !== cat.shape);
    const shapes = match ? [cat.shape, ...sample(rng, others, n - 1)] : sample(rng, others, n);
    return shapes.map((shape) => ({ shape, fill: vividColour(rng) }));
  }
  // Colour prompts: every symbol in the grid wears one of the three named colours, so no tile holds a
  // hue "between" the target and another (orange next to red would be ambiguous).
  const others = COLOUR_NAMES.filter((c) => c !== cat.colour);
  return Array.from({ length: n }, (_, i) => ({
    shape: pick(rng, SHAPES),
    fill: NAMED_COLOURS[match && i === 0 ? cat.colour : pick(rng, others)],
  }));
}

/** Paints one tile: a pale scene (so symbol colours read true), its symbols, a stray line. */
function drawTile(
  ctx: SKRSContext2D,
  rng: Random,
  tile: SelectTile,
  symbols: Array<{ shape: Shape; fill: string }>,
  look: boolean,
): Array<{ shape: Shape; rotation: number }> {
  ctx.save();
  ctx.translate(tile.x, tile.y);
  ctx.beginPath();
  ctx.rect(0, 0, TILE, TILE);
  ctx.clip();
  // 'simple' on purpose: clutter blobs inside a 96 px tile could pass for a symbol and make prompts unfair.
  drawBackground(ctx, rng, {
    width: TILE,
    height: TILE,
    detail: 'simple',
    lightness: [72, 88],
    saturation: [10, 35],
  });
  let spots: Placed[] | null = null;
  for (let maxR = 26; !spots; maxR -= 2) {
    const radii = symbols.map(() => range(rng, Math.max(12, maxR - 6), maxR));
    spots = placeCircles(rng, { width: TILE, height: TILE }, radii, 5);
  }
  const drawn = symbols.map((sym, i) => {
    const s = (spots as Placed[])[i] as Placed;
    const stroke = chance(rng, 0.5) ? 'rgba(30,30,30,0.8)' : 'rgba(255,255,255,0.9)';
    // Named in the prompt, so turned only as far as it still reads as its name.
    const rotation = namedTurn(rng, sym.shape);
    drawSymbol(ctx, { ...sym, x: s.x, y: s.y, r: s.r, rotation, stroke, ...(look ? symbolLook(rng) : {}) });
    return { shape: sym.shape, rotation };
  });
  drawDistractorLines(ctx, rng, TILE, TILE, int(rng, 0, 2));
  ctx.restore();
  return drawn;
}

/** What a select grid will show, decided before any drawing (so tests can check it without pixels). */
export interface SelectPlan {
  category: SelectCategory;
  /** Matching tile indices, ascending. */
  indices: number[];
  /** Per tile, its symbols' shapes and fills. */
  symbols: Array<Array<{ shape: Shape; fill: string }>>;
}

/**
 * Share of colour prompts. Zero by default: a named colour is a pixel value, so counting pixels near it
 * per tile solved every colour prompt in the adversarial harness (docs/adversarial.md). Kept as an option
 * for tests and for operators who prefer them.
 */
export const DEFAULT_COLOUR_SHARE = 0;

/** Chooses the category, the 2–4 matching tiles, and every tile's symbols. */
export function planSelect(rng: Random, colourShare = DEFAULT_COLOUR_SHARE): SelectPlan {
  // 1. Category: a shape, or (when asked for) a colour.
  const category: SelectCategory = !chance(rng, colourShare)
    ? { type: 'shape', shape: pick(rng, SHAPES) }
    : { type: 'colour', colour: pick(rng, COLOUR_NAMES) };
  // 2. Which tiles match.
  const indices = sample(rng, [...SELECT_TILES.keys()], int(rng, 2, 4)).sort((a, b) => a - b);
  // 3. Symbols that match the category exactly on those tiles.
  const symbols = SELECT_TILES.map((t) => tileSymbols(rng, category, indices.includes(t.index)));
  return { category, indices, symbols };
}

/** Generates a select challenge: a 3×3 grid where 2–4 tiles match the prompt. */
export async function generateSelect(rng: Random, options: SelectOptions = {}): Promise<SelectChallenge> {
  const detail = options.detail ?? 'full';
  const format = options.format ?? 'jpeg';
  const { category, indices, symbols } = planSelect(rng, options.colourShare);
  // Paint the grid; the gaps stay white so tile borders are obvious.
  const canvas = reusableCanvas('picture', SELECT_SIZE, SELECT_SIZE);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, SELECT_SIZE, SELECT_SIZE);
  // Lit and distorted symbols on shape prompts (full detail); colour prompts keep their named colours true.
  const look = detail === 'full' && category.type === 'shape';
  const drawn = SELECT_TILES.map((tile) => drawTile(ctx, rng, tile, symbols[tile.index] ?? [], look));
  if (detail === 'full') addNoise(ctx, rng, SELECT_SIZE, SELECT_SIZE, NOISE_AMPLITUDE);

  const prompt: Prompt =
    category.type === 'shape'
      ? { key: 'challenge.select.prompt.shape', params: { shape: category.shape } }
      : { key: 'challenge.select.prompt.colour', params: { colour: category.colour } };
  return {
    kind: 'select',
    view: {
      kind: 'select',
      prompt,
      image: encodeCanvas(canvas, format),
      tiles: SELECT_TILES.map((t) => ({ ...t, label: { ...t.label, params: { ...t.label.params } } })),
      a11y: { labelKey: 'challenge.select.label', instructionsKey: 'challenge.select.keyboardHelp' },
    },
    answer: { indices },
    drawn,
  };
}

export const selectSubmissionSchema = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(GRID * GRID - 1),
  )
  .max(GRID * GRID)
  .refine((a) => new Set(a).size === a.length, 'duplicate tile');
export type SelectSubmission = z.infer<typeof selectSubmissionSchema>;

/** Accepts exactly the matching set of tiles, in any order. */
export function verifySelect(answer: SelectAnswer, selected: unknown): Verdict {
  // 1. Well-formed: tile indices 0–8, no duplicates.
  const parsed = selectSubmissionSchema.safeParse(selected);
  if (!parsed.success) return reject('malformed');
  // 2. Exactly the matching set: no tile missing, none extra.
  const chosen = new Set(parsed.data);
  const ok = chosen.size === answer.indices.length && answer.indices.every((i) => chosen.has(i));
  return ok ? ACCEPT : reject('selection');
}
