/**
 * Synthetic slide trajectories for tests (here and in the API's browser tests): human-like drags and key
 * runs that verification must accept, and the robotic patterns it must refuse. Not exported from the
 * package index: nothing in production should draw a fake trajectory.
 */
import { int, type Random, range } from './random.ts';
import { KEYBOARD_LARGE_STEP_PX, KEYBOARD_STEP_PX, type TrajectoryPoint } from './trajectory.ts';

/** Minimum-jerk position profile (Flash & Hogan 1985): how an arm moves between two points. */
const minimumJerk = (tau: number): number => {
  const t = Math.min(1, Math.max(0, tau));
  return 10 * t ** 3 - 15 * t ** 4 + 6 * t ** 5;
};

export interface HumanDragOptions {
  /** Total press-to-release time in ms (default random 500–2500). */
  durationMs?: number;
  /** Overshoot past the target (negative: undershoot), corrected at the end, in px (default −8 to 8). */
  overshootPx?: number;
}

/**
 * A human-like drag to `targetX`: optional pause before moving, a minimum-jerk main movement (with an
 * overshoot), a corrective sub-movement, hand tremor on x, slow vertical drift, frame-rate sample jitter.
 */
export function humanDrag(rng: Random, targetX: number, o: HumanDragOptions = {}): TrajectoryPoint[] {
  const duration = o.durationMs ?? range(rng, 500, 2500);
  const overshoot = o.overshootPx ?? range(rng, -8, 8);
  const startPause = range(rng, 0, 0.15) * duration;
  const mainEnd = range(rng, 0.6, 0.8) * duration;
  const correctEnd = range(rng, 0.85, 1) * duration;
  const driftAmp = range(rng, 1.5, 6) * (rng.next() < 0.5 ? -1 : 1);
  const tremorAmp = range(rng, 0, 0.4);
  const tremorHz = range(rng, 8, 12);
  const tremorPhase = range(rng, 0, Math.PI * 2);
  const y0 = range(rng, -3, 3);
  const points: TrajectoryPoint[] = [];
  for (let t = 0; t < duration; t += range(rng, 8, 25)) {
    points.push(sampleAt(t));
  }
  points.push(sampleAt(duration));
  return points;

  function sampleAt(t: number): TrajectoryPoint {
    const main = minimumJerk((t - startPause) / (mainEnd - startPause)) * (targetX + overshoot);
    const correction = minimumJerk((t - mainEnd) / (correctEnd - mainEnd)) * overshoot;
    // Tremor fades in as the hand moves and is zero at rest, so the final sample sits on the target.
    const moving = t > startPause && t < correctEnd ? 1 : 0;
    const tremor = moving * tremorAmp * Math.sin(2 * Math.PI * tremorHz * (t / 1000) + tremorPhase);
    const progress = Math.min(1, Math.max(0, (t - startPause) / (duration - startPause)));
    const y = y0 + driftAmp * Math.sin(progress * Math.PI * 0.9) + range(rng, -0.5, 0.5);
    return { t, x: main - correction + tremor, y };
  }
}

/** A human at the keyboard: large steps, then small ones, with irregular intervals and a held-key burst. */
export function humanKeys(rng: Random, targetX: number): TrajectoryPoint[] {
  const points: TrajectoryPoint[] = [];
  let x = 0;
  let t = 0;
  const press = (dx: number, gap: number): void => {
    t += gap;
    x += dx;
    points.push({ t, x, y: 0 });
  };
  // Large steps: tapped (120–400 ms apart) or held (a ~500 ms repeat delay, then ~33 ms repeats).
  const held = rng.next() < 0.5;
  let first = true;
  while (x + KEYBOARD_LARGE_STEP_PX <= targetX - 6) {
    const gap = first
      ? range(rng, 0, 50)
      : held
        ? points.length === 1
          ? range(rng, 400, 600)
          : range(rng, 30, 36)
        : range(rng, 120, 400);
    press(KEYBOARD_LARGE_STEP_PX, gap);
    first = false;
  }
  // A pause to look, then small taps until the piece is within 2 px of the gap.
  let pause = range(rng, 200, 700);
  while (Math.abs(x - targetX) > 2) {
    press(x < targetX ? KEYBOARD_STEP_PX : -KEYBOARD_STEP_PX, pause);
    pause = range(rng, 90, 350);
  }
  // A look at the fit, then Enter: the confirming point, where the piece already is.
  press(0, range(rng, 250, 900));
  return points;
}

/** A script's "drag": a straight line at constant speed, optionally with random y and sample jitter. */
export function linearDrag(
  rng: Random,
  targetX: number,
  o: { durationMs: number; yJitterPx?: number; sampleMs?: readonly [number, number] },
): TrajectoryPoint[] {
  const [dtMin, dtMax] = o.sampleMs ?? [16, 16];
  const points: TrajectoryPoint[] = [];
  const at = (t: number): TrajectoryPoint => ({
    t,
    x: (targetX * t) / o.durationMs,
    y: o.yJitterPx ? range(rng, -o.yJitterPx, o.yJitterPx) : 0,
  });
  for (let t = 0; t < o.durationMs; t += range(rng, dtMin, dtMax)) points.push(at(t));
  points.push(at(o.durationMs));
  return points;
}

/** An eased drag on a rail: acceleration and deceleration, but not one pixel off the axis. */
export function easedRailDrag(rng: Random, targetX: number, durationMs: number): TrajectoryPoint[] {
  const points: TrajectoryPoint[] = [];
  for (let t = 0; t < durationMs; t += int(rng, 12, 20))
    points.push({ t, x: targetX * minimumJerk(t / durationMs), y: 0 });
  points.push({ t: durationMs, x: targetX, y: 0 });
  return points;
}

/** A script pressing the arrow key on a fixed timer, then Enter on the same beat. */
export function timerKeys(targetX: number, intervalMs: number): TrajectoryPoint[] {
  const points: TrajectoryPoint[] = [];
  let t = 0;
  for (let x = KEYBOARD_STEP_PX; x <= targetX + 2; x += KEYBOARD_STEP_PX, t += intervalMs) {
    points.push({ t, x, y: 0 });
  }
  const last = points[points.length - 1] as TrajectoryPoint;
  points.push({ t: last.t + intervalMs, x: last.x, y: 0 });
  return points;
}
