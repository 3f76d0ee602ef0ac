/**
 * A model of a person solving each image kind, for measuring first-try success where no people are at
 * hand. It knows the answer (what a person sees), and loses it the ways a person does: a drop that lands
 * where the eye put the piece, give or take the hand's precision at the zoom the widget is seen at; a
 * turned piece judged against an unturned hole; clicks near a distorted symbol's centre; a symbol whose
 * rotation makes it read as another name. Every figure below is an assumption, stated with its reason;
 * none was measured on people here.
 */
import type { ClickAnswer } from '../../core/src/challenges/click.ts';
import { chance, int, type Random, range } from '../../core/src/challenges/random.ts';
import type { Shape } from '../../core/src/challenges/shapes.ts';
import type { SlideAnswer } from '../../core/src/challenges/slide.ts';
import { humanDrag } from '../../core/src/challenges/test-trajectories.ts';
import type { TrajectoryPoint } from '../../core/src/challenges/trajectory.ts';

export const PERSON = {
  /** Share of people on a touch screen (phones); the rest use a mouse or touchpad. */
  touchShare: 0.5,
  /**
   * CSS px per image px: the widget's stage is 300–316 CSS px wide for a 300 px picture (panel at most
   * 340 px); browser zoom at 100 % (a zoomed page makes the picture larger and the drop more precise, so
   * 1 is the harder case).
   */
  zoom: 1,
  /** Endpoint spread of a mouse drop with the piece in view, standard deviation in CSS px. */
  mouseDropSd: 1,
  /** A finger shifts the contact point as it lifts: standard deviation in CSS px. */
  touchDropSd: 2,
  /**
   * Judging a turned piece over an unturned hole by eye: standard deviation in image px, a base for an
   * unturned piece plus this much per degree of turn (the edges no longer line up, so the eye matches
   * centres and areas).
   */
  alignSd: 0.8,
  alignSdPerDegree: 0.06,
  /** Clicking a symbol: the eye's centre of a stretched, sheared shape, as a share of its radius (sd). */
  clickCentreSdShare: 0.15,
  mouseClickSd: 1.5,
  touchClickSd: 3,
  /**
   * Rotations at which a shape reads as another name: a square turned 30–60 degrees off its axes is "a
   * diamond", a cross as much is "an x", a heart turned past 90 degrees is no longer read as a heart.
   * Degrees of deviation from upright beyond which it is misread, per shape; absent: any rotation reads.
   */
  misreadBeyondDeg: { square: 30, cross: 30, heart: 90 } as Partial<Record<Shape, number>>,
} as const;

/** Standard normal draw from the seeded source (Box-Muller). */
export function gaussian(rng: Random): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export type Device = 'mouse' | 'touch';
export const device = (rng: Random): Device => (chance(rng, PERSON.touchShare) ? 'touch' : 'mouse');

/**
 * A person's slide: a look, then an eased drag with overshoot and correction, tremor and drift
 * (core's human model), to where they judged the gap, off by their alignment and their hand.
 */
export function personSlide(
  rng: Random,
  truth: SlideAnswer,
  turnDeg: number,
  how: Device = device(rng),
): { x: number; input: 'pointer' | 'touch'; trajectory: TrajectoryPoint[]; lookMs: number } {
  const align = PERSON.alignSd + PERSON.alignSdPerDegree * Math.abs(turnDeg);
  const hand = (how === 'touch' ? PERSON.touchDropSd : PERSON.mouseDropSd) / PERSON.zoom;
  const error = Math.hypot(align, hand) * gaussian(rng);
  const x = Math.round((truth.x + error) * 10) / 10;
  const trajectory = humanDrag(rng, x, {
    durationMs: range(rng, 700, 2200),
    overshootPx: range(rng, -8, 8),
  }).map((p) => ({
    t: Math.round(p.t * 10) / 10,
    x: Math.round(p.x * 10) / 10,
    y: Math.round(p.y * 10) / 10,
  }));
  return { x, input: how === 'touch' ? 'touch' : 'pointer', trajectory, lookMs: range(rng, 800, 2500) };
}

/** A person's clicks: a look at the strip and the scene, then each symbol's centre as they see it, in order. */
export function personClicks(rng: Random, answer: ClickAnswer, how: Device = device(rng)) {
  const hand = (how === 'touch' ? PERSON.touchClickSd : PERSON.mouseClickSd) / PERSON.zoom;
  let t = range(rng, 1200, 4000);
  return answer.targets.map((target, i) => {
    if (i > 0) t += range(rng, 400, 1200);
    // The target's radius includes a 4 px margin; the symbol's own is 4 less.
    const sd = Math.hypot(PERSON.clickCentreSdShare * (target.r - 4), hand);
    return {
      x: Math.round((target.x + sd * gaussian(rng)) * 10) / 10,
      y: Math.round((target.y + sd * gaussian(rng)) * 10) / 10,
      t: Math.round(t),
    };
  });
}

/** Whether a person reads a symbol turned by `rotation` radians as its shape's name. */
export function readsAs(shape: Shape, rotation: number): boolean {
  const limit = PERSON.misreadBeyondDeg[shape];
  if (limit === undefined) return true;
  // Deviation from upright, modulo the shape's own symmetry (a square and a cross repeat every 90 degrees).
  const period = shape === 'heart' ? 360 : 90;
  const deg = ((((rotation * 180) / Math.PI) % period) + period) % period;
  return Math.min(deg, period - deg) <= limit;
}

/** A person's select: every tile where they read the prompted shape, in a random order. */
export function personSelect(
  rng: Random,
  shape: Shape,
  tiles: ReadonlyArray<ReadonlyArray<{ shape: Shape; rotation: number }>>,
): number[] {
  const chosen = tiles.flatMap((symbols, i) =>
    symbols.some((s) => s.shape === shape && readsAs(s.shape, s.rotation)) ? [i] : [],
  );
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = int(rng, 0, i);
    [chosen[i], chosen[j]] = [chosen[j] as number, chosen[i] as number];
  }
  return chosen;
}
