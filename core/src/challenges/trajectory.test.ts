import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './random.ts';
import { easedRailDrag, humanDrag, humanKeys, linearDrag, timerKeys } from './test-trajectories.ts';
import { bucketSpeeds, checkTrajectory, KEYBOARD_STEP_PX, type TrajectoryPoint } from './trajectory.ts';

const TRACK_MAX = 236;
const last = (p: TrajectoryPoint[]): number => (p[p.length - 1] as TrajectoryPoint).x;
const drag = (p: TrajectoryPoint[], input: 'pointer' | 'touch' = 'pointer') =>
  checkTrajectory(input, p, last(p), TRACK_MAX);
const keys = (p: TrajectoryPoint[]) => checkTrajectory('keyboard', p, last(p), TRACK_MAX);

// Targets span the whole range the slide generator can place a gap at.
const target = fc.integer({ min: 72, max: 232 });
const seed = fc.integer();

describe('checkTrajectory, pointer and touch', () => {
  it('accepts a human-like drag (pause, ease-in, overshoot, correction, drift)', () => {
    expect(drag(humanDrag(seededRandom('h1'), 150))).toBeNull();
    expect(drag(humanDrag(seededRandom('h2'), 80, { durationMs: 400, overshootPx: 0 }), 'touch')).toBeNull();
  });

  it('property: random human-like drags pass', () => {
    fc.assert(
      fc.property(target, seed, fc.integer({ min: 350, max: 5000 }), (x, s, ms) => {
        expect(drag(humanDrag(seededRandom(s), x, { durationMs: ms }))).toBeNull();
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('refuses an instant straight-line drag (step 2: too fast)', () => {
    const instant = [
      { t: 0, x: 0, y: 0 },
      { t: 5, x: 60, y: 0 },
      { t: 10, x: 150, y: 0 },
    ];
    expect(drag(instant)).toBe('too_fast');
    expect(drag(linearDrag(seededRandom(1), 150, { durationMs: 100 }))).toBe('too_fast');
  });

  it('property: constant-speed straight lines fail, at any duration', () => {
    fc.assert(
      fc.property(target, seed, fc.integer({ min: 0, max: 10_000 }), (x, s, ms) => {
        expect(drag(linearDrag(seededRandom(s), x, { durationMs: ms }))).not.toBeNull();
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('property: constant speed fails even with random y and irregular sampling (step 8)', () => {
    fc.assert(
      fc.property(target, seed, fc.integer({ min: 250, max: 10_000 }), (x, s, ms) => {
        const p = linearDrag(seededRandom(s), x, { durationMs: ms, yJitterPx: 3, sampleMs: [8, 25] });
        expect(drag(p)).not.toBeNull();
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('property: an eased drag on a rail fails as too straight (step 7)', () => {
    fc.assert(
      fc.property(target, seed, fc.integer({ min: 250, max: 5000 }), (x, s, ms) => {
        expect(drag(easedRailDrag(seededRandom(s), x, ms))).toBe('too_straight');
      }),
    );
  });

  it('step 1: refuses timestamps that go backwards', () => {
    const p = humanDrag(seededRandom(3), 120);
    [p[3], p[4]] = [p[4] as TrajectoryPoint, p[3] as TrajectoryPoint];
    expect(drag(p)).toBe('malformed');
  });

  it('step 2: refuses a drag longer than the limit', () => {
    expect(drag(humanDrag(seededRandom(4), 120, { durationMs: 121_000 }))).toBe('too_slow');
  });

  it('step 3: refuses a final x that disagrees with the trajectory', () => {
    const p = humanDrag(seededRandom(5), 120);
    expect(checkTrajectory('pointer', p, 140, TRACK_MAX)).toBe('inconsistent');
  });

  it('step 4: refuses a drag that does not start at the resting place', () => {
    const p = humanDrag(seededRandom(6), 120).map((q) => ({ ...q, x: q.x + 30 }));
    expect(drag(p)).toBe('inconsistent');
  });

  it('step 5: refuses too few samples', () => {
    const p = [0, 100, 200, 300, 400].map((t, i) => ({ t, x: [0, 10, 60, 110, 120][i] as number, y: i }));
    expect(drag(p)).toBe('too_few_samples');
    expect(checkTrajectory('pointer', [], 0, TRACK_MAX)).toBe('too_few_samples');
  });

  it('step 6: refuses erratic back-and-forth', () => {
    const p = Array.from({ length: 60 }, (_, i) => ({
      t: i * 20,
      x: i === 59 ? 120 : (i % 2) * 100,
      y: i % 3,
    }));
    expect(drag(p)).toBe('erratic');
  });

  it('steps 6b-9: refuse the jitter script as it reaches the server (0.5-1.2 s, ±2 px, 10-24 ms samples)', () => {
    fc.assert(
      fc.property(target, fc.integer({ min: 500, max: 1200 }), fc.string(), (x, ms, seed) => {
        const rng = seededRandom(seed);
        const line = linearDrag(rng, x, { durationMs: ms, yJitterPx: 2, sampleMs: [10, 24] }).map((p, i) =>
          i === 0 ? p : { ...p, x: p.x + (rng.next() * 4 - 2) },
        );
        expect(drag(line)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('step 6b: refuses a straight line with pixel jitter (the jitter script), at any duration', () => {
    fc.assert(
      fc.property(target, fc.integer({ min: 400, max: 3000 }), fc.string(), (x, ms, seed) => {
        const rng = seededRandom(seed);
        const line = linearDrag(rng, x, { durationMs: ms, yJitterPx: 2, sampleMs: [10, 24] }).map((p, i) =>
          i === 0 ? p : { ...p, x: p.x + (rng.next() * 4 - 2) },
        );
        expect(drag(line)).not.toBeNull();
      }),
    );
  });

  it('step 9: refuses a drag that ends at full speed', () => {
    // Accelerates, then stops dead on the last sample: no deceleration to aim.
    const p = Array.from({ length: 41 }, (_, i) => ({ t: i * 20, x: 150 * (i / 40) ** 2, y: i % 2 }));
    expect(drag(p)).toBe('constant_speed');
  });

  it('bucketSpeeds averages over three to five buckets', () => {
    expect(bucketSpeeds(linearDrag(seededRandom(7), 100, { durationMs: 100 }))).toHaveLength(3);
    expect(bucketSpeeds(linearDrag(seededRandom(7), 100, { durationMs: 1000 }))).toHaveLength(5);
  });
});

describe('checkTrajectory, keyboard', () => {
  it('property: human key runs pass (tapped or held, then fine steps)', () => {
    fc.assert(
      fc.property(target, seed, (x, s) => {
        expect(keys(humanKeys(seededRandom(s), x))).toBeNull();
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('accepts a short, evenly tapped run (six intervals within 5 % of each other)', () => {
    const p = humanKeys(seededRandom(1577348857), 75);
    expect(p).toHaveLength(8);
    expect(keys(p)).toBeNull();
  });

  it('needs no vertical movement', () => {
    const p = humanKeys(seededRandom('k'), 150);
    expect(p.every((q) => q.y === 0)).toBe(true);
    expect(keys(p)).toBeNull();
  });

  it('property: a fixed-timer key script fails', () => {
    fc.assert(
      fc.property(target, fc.integer({ min: 0, max: 500 }), (x, ms) => {
        expect(keys(timerKeys(x, ms))).not.toBeNull();
      }),
    );
  });

  it('step 4: refuses too few key presses', () => {
    expect(
      keys([
        { t: 0, x: 20, y: 0 },
        { t: 400, x: 40, y: 0 },
        { t: 900, x: 40, y: 0 },
      ]),
    ).toBe('too_few_samples');
  });

  it('step 5: refuses moves the widget never makes', () => {
    const p = humanKeys(seededRandom('k2'), 150);
    (p[2] as TrajectoryPoint).x += 7;
    expect(keys(p)).toBe('inconsistent');
  });

  it('step 5: accepts Home/End jumps to either end of the track', () => {
    const p = [
      { t: 0, x: TRACK_MAX, y: 0 },
      { t: 300, x: TRACK_MAX - 20, y: 0 },
      { t: 700, x: TRACK_MAX - 20 - KEYBOARD_STEP_PX, y: 0 },
      { t: 880, x: TRACK_MAX - 20 - 2 * KEYBOARD_STEP_PX, y: 0 },
      { t: 1300, x: TRACK_MAX - 20 - 2 * KEYBOARD_STEP_PX, y: 0 },
    ];
    expect(keys(p)).toBeNull();
  });

  /** A timer script that waits before confirming, so that step 7 passes and step 6 is what judges it. */
  const lateConfirm = (p: TrajectoryPoint[]): TrajectoryPoint[] => {
    (p[p.length - 1] as TrajectoryPoint).t += 400;
    return p;
  };

  it('step 6: refuses presses faster than any key repeat', () => {
    expect(keys(lateConfirm(timerKeys(150, 10)))).toBe('too_fast');
  });

  it('step 6: refuses a fixed timer', () => {
    expect(keys(lateConfirm(timerKeys(150, 60)))).toBe('constant_speed');
  });

  it('step 7: refuses a run confirmed on the beat of its moves, or not confirmed at all', () => {
    expect(keys(timerKeys(150, 60))).toBe('too_fast');
    const p = humanKeys(seededRandom('k3'), 150);
    const confirm = p[p.length - 1] as TrajectoryPoint;
    const lastMove = p[p.length - 2] as TrajectoryPoint;
    expect(keys([...p.slice(0, -1), { ...confirm, t: lastMove.t + 100 }])).toBe('too_fast');
    expect(keys(p.slice(0, -1))).toBe('inconsistent');
    expect(keys(p)).toBeNull();
  });
});
