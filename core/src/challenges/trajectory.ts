import { z } from 'zod';
import type { RejectReason } from './types.ts';

/**
 * Checks that a slide's drag trajectory looks like a person moved it. None of this stops a bot that
 * replays recorded human drags; it stops the cheap ones (teleport, straight constant-speed line, fixed
 * key repeat), and its reasons feed the risk engine. Thresholds are deliberately loose: a false reject
 * costs a real user a retry.
 */
export const TRAJECTORY_LIMITS = {
  /** More points than this is not a drag we recorded: the widget keeps at most one per animation frame. */
  maxSamples: 1500,
  /** Pointer and touch drags need this many samples (60 Hz for 250 ms gives 15). */
  minPointerSamples: 10,
  /** Keyboard solutions need this many key presses (the gap is at least 72 px away, 20 px per large step). */
  minKeySamples: 3,
  /** Faster than this from press to release is not a person aiming. */
  minDurationMs: 250,
  /** Slower than this, the challenge has long expired anyway. */
  maxDurationMs: 120_000,
  /** The drag starts where the piece rests (x = 0). */
  startSlackPx: 8,
  /** The last sample must agree with the submitted x. */
  endSlackPx: 3,
  /** Pointer and touch: total vertical wander must reach this (a hand never drags on a rail). */
  minYRangePx: 1,
  /** Leftward movement allowed, as base px plus a fraction of the distance (overshoot and correction). */
  backtrackBasePx: 24,
  backtrackFraction: 0.5,
  /**
   * Reversals (a move of 1 px or more followed by one of 1 px or more the other way) allowed, as base plus
   * a fraction of the samples: a hand overshoots and corrects a few times, and its tremor is well under a
   * pixel per frame; random jitter added to a scripted line flips direction at every other sample.
   */
  maxReversalsBase: 4,
  maxReversalsFraction: 0.05,
  /** Coefficient of variation of bucketed speeds below this is a machine's constant speed. */
  minSpeedVariation: 0.25,
  /** The first speed bucket must be at most this fraction of the peak (people accelerate)... */
  maxStartSpeedRatio: 0.8,
  /** ...and the last at most this fraction (people slow down to aim). */
  maxEndSpeedRatio: 0.6,
  /** Key presses closer than this are faster than any key repeat. */
  minKeyIntervalMs: 15,
  /**
   * Coefficient of variation of key intervals below this is a script's fixed timer. Low on purpose: a
   * steady tapper reaches 0.05–0.1, a timer about 0.01. Only judged from this many intervals up: the
   * variation of five or six intervals spreads so widely by chance that a person's short run can look
   * like a timer, and a keyboard user must never be refused for typing evenly (the keyboard path's price
   * is its proof-of-work, not its timing).
   */
  minKeyIntervalVariation: 0.05,
  minKeyIntervalsJudged: 7,
  /**
   * A keyboard run ends with the confirming key (Enter or Space, a point that does not move) at least this
   * long after the last move: a person presses it after seeing the piece sit in the gap, and a visual
   * reaction takes 200 ms or more; a script's loop presses it on its usual beat.
   */
  minConfirmMs: 150,
} as const;

/** Arrow keys move the piece by `step` px, Shift+Arrow or PageUp/PageDown by `largeStep`; Home/End jump. */
export const KEYBOARD_STEP_PX = 4;
export const KEYBOARD_LARGE_STEP_PX = 20;

const L = TRAJECTORY_LIMITS;

export const trajectoryPointSchema = z.object({
  /** ms since the pointer went down (or the first key press); non-decreasing. */
  t: z.number().min(0),
  x: z.number(),
  y: z.number(),
});
export type TrajectoryPoint = z.infer<typeof trajectoryPointSchema>;
export type InputKind = 'pointer' | 'touch' | 'keyboard';

const mean = (v: readonly number[]): number => v.reduce((s, x) => s + x, 0) / v.length;
/** Standard deviation over mean absolute value; 0 for an empty or all-zero list. */
function variation(v: readonly number[]): number {
  if (v.length === 0) return 0;
  const m = mean(v);
  const scale = mean(v.map(Math.abs));
  if (scale === 0) return 0;
  return Math.sqrt(mean(v.map((x) => (x - m) ** 2))) / scale;
}

/** Position at time t by linear interpolation (points sorted by t). */
function xAt(points: readonly TrajectoryPoint[], t: number): number {
  let i = 1;
  while (i < points.length - 1 && (points[i] as TrajectoryPoint).t < t) i++;
  const a = points[i - 1] as TrajectoryPoint;
  const b = points[i] as TrajectoryPoint;
  if (b.t === a.t) return b.x;
  const f = Math.min(1, Math.max(0, (t - a.t) / (b.t - a.t)));
  return a.x + f * (b.x - a.x);
}

/**
 * Speeds over three to five equal time buckets (at least ~40 ms each). Bucketing averages out per-sample
 * pixel noise, which would otherwise make a noisy constant-speed line look irregular; five is few enough
 * that ±2 px jitter on a scripted line stays flat, and enough to see a hand speed up and slow down.
 */
export function bucketSpeeds(points: readonly TrajectoryPoint[]): number[] {
  const first = points[0] as TrajectoryPoint;
  const duration = (points[points.length - 1] as TrajectoryPoint).t - first.t;
  const buckets = Math.max(3, Math.min(5, Math.floor(duration / 40)));
  const dt = duration / buckets;
  const speeds: number[] = [];
  for (let i = 0; i < buckets; i++) {
    speeds.push((xAt(points, first.t + (i + 1) * dt) - xAt(points, first.t + i * dt)) / dt);
  }
  return speeds;
}

/** Pointer and touch drags: steps 5–9 (step 4 is in checkTrajectory). Returns the first failure or null. */
function checkDrag(points: readonly TrajectoryPoint[], finalX: number): RejectReason | null {
  // 5. Enough samples to judge at all.
  if (points.length < L.minPointerSamples) return 'too_few_samples';
  // 6. Monotone-ish: leftward movement bounded (a little overshoot and correction is human).
  let backtrack = 0;
  for (let i = 1; i < points.length; i++) {
    const dx = (points[i] as TrajectoryPoint).x - (points[i - 1] as TrajectoryPoint).x;
    if (dx < 0) backtrack -= dx;
  }
  if (backtrack > L.backtrackBasePx + L.backtrackFraction * Math.abs(finalX)) return 'erratic';
  // 6b. Smooth: no pixel jitter flipping the direction sample after sample.
  let reversals = 0;
  for (let i = 2; i < points.length; i++) {
    const a = (points[i - 1] as TrajectoryPoint).x - (points[i - 2] as TrajectoryPoint).x;
    const b = (points[i] as TrajectoryPoint).x - (points[i - 1] as TrajectoryPoint).x;
    if (Math.abs(a) >= 1 && Math.abs(b) >= 1 && Math.sign(a) !== Math.sign(b)) reversals++;
  }
  if (reversals > L.maxReversalsBase + L.maxReversalsFraction * points.length) return 'erratic';
  // 7. Off-axis jitter: a hand drifts vertically, a script on a rail does not.
  const ys = points.map((p) => p.y);
  if (Math.max(...ys) - Math.min(...ys) < L.minYRangePx) return 'too_straight';
  // 8. Speed varies: bucketed speeds are not flat.
  const speeds = bucketSpeeds(points);
  if (variation(speeds) < L.minSpeedVariation) return 'constant_speed';
  // 9. Acceleration then deceleration: the peak is well above both ends.
  const peak = Math.max(...speeds);
  if ((speeds[0] as number) > L.maxStartSpeedRatio * peak) return 'constant_speed';
  if ((speeds[speeds.length - 1] as number) > L.maxEndSpeedRatio * peak) return 'constant_speed';
  return null;
}

/** Keyboard solutions: steps 4–7. Returns the first failed check, or null. */
function checkKeys(all: readonly TrajectoryPoint[], trackMax: number): RejectReason | null {
  // 7 (first, as it splits the run): the last point is the confirming key, a pause after the last move.
  const confirm = all[all.length - 1] as TrajectoryPoint;
  const points = all.slice(0, -1);
  const lastMove = points[points.length - 1];
  if (!lastMove || Math.abs(confirm.x - lastMove.x) > 0.01) return 'inconsistent';
  if (confirm.t - lastMove.t < L.minConfirmMs) return 'too_fast';
  // 4. Enough key presses to have reached any gap.
  if (points.length < L.minKeySamples) return 'too_few_samples';
  // 5. Every move is one the widget makes: a step, a large step, or a jump to either end (Home/End).
  const near = (a: number, b: number): boolean => Math.abs(a - b) < 0.01;
  let prev = 0;
  for (const p of points) {
    const d = Math.abs(p.x - prev);
    const ok =
      near(d, 0) ||
      near(d, KEYBOARD_STEP_PX) ||
      near(d, KEYBOARD_LARGE_STEP_PX) ||
      near(p.x, 0) ||
      near(p.x, trackMax);
    if (!ok) return 'inconsistent';
    prev = p.x;
  }
  // 6. Intervals are possible for a person and not a fixed timer. Auto-repeat is regular, but a person's
  //    run also holds the initial repeat delay and the pauses between bursts.
  const intervals: number[] = [];
  for (let i = 1; i < points.length; i++) {
    intervals.push((points[i] as TrajectoryPoint).t - (points[i - 1] as TrajectoryPoint).t);
  }
  if (intervals.some((d) => d < L.minKeyIntervalMs)) return 'too_fast';
  if (intervals.length >= L.minKeyIntervalsJudged && variation(intervals) < L.minKeyIntervalVariation)
    return 'constant_speed';
  return null;
}

/**
 * Judges a slide trajectory against the submitted final x. Steps 1–3 apply to every input kind; the
 * rest depend on it. Returns null when it looks human, else the first failed check.
 */
export function checkTrajectory(
  input: InputKind,
  points: readonly TrajectoryPoint[],
  finalX: number,
  trackMax: number,
): RejectReason | null {
  if (points.length === 0) return 'too_few_samples';
  const first = points[0] as TrajectoryPoint;
  const last = points[points.length - 1] as TrajectoryPoint;
  // 1. Timestamps never go backwards.
  for (let i = 1; i < points.length; i++) {
    if ((points[i] as TrajectoryPoint).t < (points[i - 1] as TrajectoryPoint).t) return 'malformed';
  }
  // 2. Duration within what a person takes.
  const duration = last.t - first.t;
  if (duration < L.minDurationMs) return 'too_fast';
  if (duration > L.maxDurationMs) return 'too_slow';
  // 3. The trajectory ends where the submission says the piece is...
  if (Math.abs(last.x - finalX) > L.endSlackPx) return 'inconsistent';
  if (input === 'keyboard') return checkKeys(points, trackMax);
  // 4. ...and a drag starts where the piece rests (a keyboard run is checked move by move instead).
  if (Math.abs(first.x) > L.startSlackPx) return 'inconsistent';
  return checkDrag(points, finalX);
}
