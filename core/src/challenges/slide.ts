import type { Canvas, Path2D, SKRSContext2D } from '@napi-rs/canvas';
import { z } from 'zod';
import {
  addNoise,
  type Detail,
  drawBackground,
  drawDistractorLines,
  NOISE_AMPLITUDE,
} from './backgrounds.ts';
import { encodeCanvas, reusableCanvas } from './image.ts';
import { chance, int, type Random, range } from './random.ts';
import { BODY, decoyOutline, HolePlacement, PAD, type PieceSides, piecePath } from './slide-holes.ts';
import {
  checkTrajectory,
  KEYBOARD_LARGE_STEP_PX,
  KEYBOARD_STEP_PX,
  TRAJECTORY_LIMITS,
  trajectoryPointSchema,
} from './trajectory.ts';
import { ACCEPT, type EncodedImage, type ImageFormat, type Prompt, reject, type Verdict } from './types.ts';

/** Background size in px. */
export const SLIDE_WIDTH = 300;
export const SLIDE_HEIGHT = 150;
/** The piece image is square: body plus padding on each side. */
export const PIECE_SIZE = BODY + 2 * PAD;
/** The piece slides from x = 0 to here (its left edge, in background px). */
export const TRACK_MAX = SLIDE_WIDTH - PIECE_SIZE;
/**
 * How far the final x may be from the gap and still count, in px (either side): 13 of the 161 gap
 * positions, an 8.1 % blind guess. A person judging a turned piece over an unturned hole, with a mouse or a
 * finger, lands within it about 99 times in 100 on the bench's person model (loadtest/adversarial/human.ts;
 * within ±3, about 72 in 100); the hole finder, when it finds the hole, lands on it exactly, so the
 * tolerance does not help it. Keyboard steps of 4 px always reach within 2.
 */
export const SLIDE_TOLERANCE_PX = 6;
/** The gap starts at least this far right, so the resting piece never overlaps it. */
const MIN_GAP_X = PIECE_SIZE + 8;

export interface SlideView {
  kind: 'slide';
  prompt: Prompt;
  background: EncodedImage;
  piece: EncodedImage;
  /** Top of the piece image in background px; the piece moves only horizontally. */
  pieceY: number;
  /** Range of the piece's left edge in background px (the slider's aria-valuemin/max). */
  track: { min: 0; max: number };
  /** Arrow-key step and Shift+Arrow / PageUp / PageDown step, in px. */
  keyboard: { step: number; largeStep: number };
  a11y: { labelKey: string; instructionsKey: string };
}
/** Where the piece's left and top edges must go, in background px. */
export interface SlideAnswer {
  x: number;
  y: number;
}
export interface SlideChallenge {
  kind: 'slide';
  view: SlideView;
  answer: SlideAnswer;
  /** How far the piece is turned, in degrees, for tests and benches; never sent or sealed. */
  drawn: { turnDeg: number };
}
export interface SlideOptions {
  /** `simple` for the standby service: fewer decorations and no decoy gap. Default `full`. */
  detail?: Detail;
  format?: ImageFormat;
}

function randomSides(rng: Random): PieceSides {
  for (;;) {
    const sides = [0, 1, 2, 3].map(() => (chance(rng, 0.15) ? 'flat' : chance(rng, 0.5) ? 'out' : 'in'));
    if (sides.filter((s) => s !== 'flat').length >= 3) return sides as unknown as PieceSides;
  }
}

/** The standby's gap: the background under it darkened, then rimmed as the edge of a hole. */
function drawGap(ctx: SKRSContext2D, x: number, y: number, outline: Path2D): void {
  ctx.save();
  ctx.translate(x, y);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.5)';
  ctx.fill(outline);
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.75)';
  ctx.stroke(outline);
  ctx.restore();
}

/**
 * A full-detail gap: the hole shows `fill` (a canvas drawn at `fx, fy` relative to the gap), darkened,
 * then rimmed. The real gap is filled from elsewhere in the picture, so its pixels are not the piece's.
 */
function drawFilledGap(
  ctx: SKRSContext2D,
  x: number,
  y: number,
  outline: Path2D,
  fill: Canvas,
  fx: number,
  fy: number,
  shade: number,
): void {
  ctx.save();
  ctx.translate(x, y);
  ctx.clip(outline);
  ctx.drawImage(fill, fx, fy);
  ctx.fillStyle = `rgba(0, 0, 0, ${shade.toFixed(2)})`;
  ctx.fillRect(0, 0, PIECE_SIZE, PIECE_SIZE);
  // A soft inner shadow instead of a crisp rim: a person reads a hole; an edge detector gets a blur
  // about as strong as the noise and the clutter's edges.
  ctx.shadowColor = 'rgba(0, 0, 0, 0.8)';
  ctx.shadowBlur = 6;
  ctx.lineWidth = 5;
  ctx.strokeStyle = 'rgba(0, 0, 0, 0.3)';
  ctx.stroke(outline);
  ctx.restore();
}

/** Runs `draw` with the canvas turned by `angle` about the piece's centre. */
function turned(ctx: SKRSContext2D, angle: number, draw: () => void): void {
  ctx.save();
  ctx.translate(PIECE_SIZE / 2, PIECE_SIZE / 2);
  ctx.rotate(angle);
  ctx.translate(-PIECE_SIZE / 2, -PIECE_SIZE / 2);
  draw();
  ctx.restore();
}

/**
 * Cuts the piece's picture out of the (undamaged) background, turned by `angle` about its centre and
 * lit by a gradient from a random side (full detail), without its rim.
 */
function cutPiece(source: Canvas, x: number, y: number, outline: Path2D, angle = 0, rng?: Random): Canvas {
  const piece = reusableCanvas('piece', PIECE_SIZE, PIECE_SIZE);
  const ctx = piece.getContext('2d');
  turned(ctx, angle, () => {
    ctx.clip(outline);
    ctx.drawImage(source, -x, -y);
    if (rng) {
      // Lighting: brighter on one side, darker on the other, so its pixels are not the scene's.
      const a = range(rng, 0, Math.PI * 2);
      const c = PIECE_SIZE / 2;
      const light = ctx.createLinearGradient(
        c - Math.cos(a) * c,
        c - Math.sin(a) * c,
        c + Math.cos(a) * c,
        c + Math.sin(a) * c,
      );
      light.addColorStop(0, `rgba(255, 255, 255, ${range(rng, 0.2, 0.35).toFixed(2)})`);
      light.addColorStop(1, `rgba(0, 0, 0, ${range(rng, 0.2, 0.35).toFixed(2)})`);
      ctx.fillStyle = light;
      ctx.fillRect(0, 0, PIECE_SIZE, PIECE_SIZE);
    }
  });
  return piece;
}

/** A bright rim with a dark edge, so the piece stands out on any background. */
function rimPiece(piece: Canvas, outline: Path2D, angle: number): void {
  const ctx = piece.getContext('2d');
  turned(ctx, angle, () => {
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = 'rgba(0, 0, 0, 0.45)';
    ctx.stroke(outline);
    ctx.lineWidth = 1.5;
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.95)';
    ctx.stroke(outline);
  });
}

/** A copy of the canvas as it is now. */
function snapshot(source: Canvas): Canvas {
  const copy = reusableCanvas('snapshot', source.width, source.height);
  copy.getContext('2d').drawImage(source, 0, 0);
  return copy;
}

/** Degrees the full-detail piece is turned by, either way: enough to misalign an unturned outline template. */
export const SLIDE_TURN_DEG = [15, 30] as const;
const TURN_DEG = SLIDE_TURN_DEG;

/**
 * Every hole is drawn a little larger or smaller than the piece, the real one included, so no hole is
 * an exact copy of the piece's outline. (The holes are not turned: a turned hole lets an unturned outline
 * matcher line up with it more often.)
 */
const HOLE_SCALE = [0.94, 1.06] as const;
/** The real hole and the decoy are at least a piece and a margin apart (weights built on first use). */
let placement: HolePlacement | undefined;
const holePlacement = () => {
  placement ??= new HolePlacement(MIN_GAP_X, TRACK_MAX - 4, PIECE_SIZE + 8);
  return placement;
};

/**
 * Full detail: the real gap and a decoy with the piece's own outline turned or mirrored, exactly on the
 * piece's row, both showing a darkened patch of the picture from somewhere else, so neither holds the
 * piece's pixels (a template match of the piece's picture finds nothing); the piece is turned and lit
 * (an unturned outline template misaligns). The two holes differ in the arrangement of their tabs only
 * (not in number, area, row or placement statistics), which a person compares at a glance. Returns the
 * piece, rimmed, and its turn in radians.
 */
function drawHardenedGaps(
  bg: Canvas,
  rng: Random,
  holes: { x: number; decoyX: number; y: number },
  sides: PieceSides,
  decoy: PieceSides,
): { piece: Canvas; angle: number } {
  const ctx = bg.getContext('2d');
  const clean = snapshot(bg);
  const angle = ((range(rng, TURN_DEG[0], TURN_DEG[1]) * Math.PI) / 180) * (chance(rng, 0.5) ? 1 : -1);
  const outline = piecePath(sides);
  const { x, decoyX, y } = holes;
  const piece = cutPiece(clean, x, y, outline, angle, rng);
  for (const [gx, gOutline] of [
    [x, outline],
    [decoyX, piecePath(decoy)],
  ] as const) {
    // A patch from at least a piece's width away, anywhere in the picture.
    let sx = 0;
    do sx = int(rng, 0, SLIDE_WIDTH - PIECE_SIZE);
    while (Math.abs(sx - gx) < PIECE_SIZE);
    const sy = int(rng, 0, SLIDE_HEIGHT - PIECE_SIZE);
    ctx.save();
    ctx.translate(gx + PIECE_SIZE / 2, y + PIECE_SIZE / 2);
    const k = range(rng, HOLE_SCALE[0], HOLE_SCALE[1]);
    ctx.scale(k, k);
    ctx.translate(-gx - PIECE_SIZE / 2, -y - PIECE_SIZE / 2);
    drawFilledGap(ctx, gx, y, gOutline, clean, -sx, -sy, range(rng, 0.35, 0.55));
    ctx.restore();
  }
  rimPiece(piece, outline, angle);
  return { piece, angle };
}

/** Generates a slide challenge: a background with a gap, and the piece that fills it. */
export async function generateSlide(rng: Random, options: SlideOptions = {}): Promise<SlideChallenge> {
  const detail = options.detail ?? 'full';
  const format = options.format ?? 'jpeg';
  const bg = reusableCanvas('picture', SLIDE_WIDTH, SLIDE_HEIGHT);
  const ctx = bg.getContext('2d');
  drawBackground(ctx, rng, { width: SLIDE_WIDTH, height: SLIDE_HEIGHT, detail });
  if (detail === 'full') {
    drawDistractorLines(ctx, rng, SLIDE_WIDTH, SLIDE_HEIGHT, int(rng, 2, 4));
    // Before the cut, so the piece and its surroundings carry the same grain: no seam to find.
    addNoise(ctx, rng, SLIDE_WIDTH, SLIDE_HEIGHT, NOISE_AMPLITUDE);
  }

  let x: number;
  const y = int(rng, 4, SLIDE_HEIGHT - PIECE_SIZE - 4);
  let sides = randomSides(rng);
  let piece: Canvas;
  let angle = 0;
  if (detail === 'full') {
    let decoy = decoyOutline(rng, sides);
    // A piece with four alike sides has no other arrangement to use as a decoy: draw another.
    while (!decoy) {
      sides = randomSides(rng);
      decoy = decoyOutline(rng, sides);
    }
    const holes = { ...holePlacement().draw(rng), y };
    x = holes.x;
    ({ piece, angle } = drawHardenedGaps(bg, rng, holes, sides, decoy));
  } else {
    x = int(rng, MIN_GAP_X, TRACK_MAX - 4);
    const outline = piecePath(sides);
    piece = cutPiece(bg, x, y, outline);
    rimPiece(piece, outline, 0);
    drawGap(ctx, x, y, outline);
  }
  const background = encodeCanvas(bg, format);
  const pieceImage = encodeCanvas(piece, format, { alpha: true });
  return {
    kind: 'slide',
    view: {
      kind: 'slide',
      prompt: { key: 'challenge.slide.prompt', params: {} },
      background,
      piece: pieceImage,
      pieceY: y,
      track: { min: 0, max: TRACK_MAX },
      keyboard: { step: KEYBOARD_STEP_PX, largeStep: KEYBOARD_LARGE_STEP_PX },
      a11y: { labelKey: 'challenge.slide.label', instructionsKey: 'challenge.slide.keyboardHelp' },
    },
    answer: { x, y },
    drawn: { turnDeg: (angle * 180) / Math.PI },
  };
}

export const slideSubmissionSchema = z.object({
  /** Final left edge of the piece, in background px. */
  x: z.number(),
  input: z.enum(['pointer', 'touch', 'keyboard']),
  trajectory: z.array(trajectoryPointSchema).max(TRAJECTORY_LIMITS.maxSamples),
});
export type SlideSubmission = z.infer<typeof slideSubmissionSchema>;

/** Accepts a slide submission only when the piece is within tolerance AND the movement looks human. */
export function verifySlide(answer: SlideAnswer, submission: unknown): Verdict {
  // 1. Well-formed: the submission is client input, so parse it before trusting any field.
  const parsed = slideSubmissionSchema.safeParse(submission);
  if (!parsed.success) return reject('malformed');
  const { x, input, trajectory } = parsed.data;
  // 2. The trajectory looks human (checked before the position, so a bot probing positions with a junk
  //    trajectory learns nothing from the order of checks if reasons ever leak).
  const why = checkTrajectory(input, trajectory, x, TRACK_MAX);
  if (why) return reject(why);
  // 3. The piece sits in the gap, within tolerance.
  if (Math.abs(x - answer.x) > SLIDE_TOLERANCE_PX) return reject('position');
  return ACCEPT;
}
