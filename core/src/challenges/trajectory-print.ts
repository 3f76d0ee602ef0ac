import { range, seededRandom } from './random.ts';
import { slideSubmissionSchema } from './slide.ts';
import type { TrajectoryPoint } from './trajectory.ts';

/**
 * A slide drag's print, for telling a replayed drag from a new one. A script that recorded one drag (its
 * own or a person's) replays it on new challenges stretched to each new gap, its clock scaled and each
 * sample nudged by a pixel or so; the trajectory checks cannot tell that from a live hand, since it was one.
 * The print is what such a replay keeps: the drag's shape with distance and time divided out (x as a share
 * of the drop point, y about its mean, both averaged over equal slices of the drag's duration). Two live
 * drags differ in their timing, overshoot, tremor and drift by many pixels somewhere; a replay stays within
 * its noise everywhere.
 *
 * Finding a near duplicate among every drag an app saw recently must cost a constant number of lookups, not
 * a scan: the print is hashed into `bands` (locality-sensitive hashing with random projections, each band a
 * key that a near duplicate shares with high probability), and only a drag that shares a band key is
 * compared exactly (`nearDuplicate`).
 */

/** Equal slices of the drag's duration; each gives one x and one y. */
const SLICES = 16;
/** Points read per slice (interpolated), averaged: smooths per-sample noise. */
const READS_PER_SLICE = 4;
/** The shape's components (x, then y, per slice); the sample counts follow. */
const SHAPE_LENGTH = 2 * SLICES;
const PRINT_LENGTH = 3 * SLICES;
/** x is a share of the drop point in these units: 1000 = the whole distance. */
const X_UNITS = 1000;
/** y in tenths of a pixel. */
const Y_UNITS = 10;

export const TRAJECTORY_PRINT = {
  /** Shape band keys per print: a replay is looked for under each. */
  bands: 8,
  /** Projections per shape band. */
  projectionsPerBand: 4,
  /** Width of a projection's bucket, in px-like units (see `weights`). */
  bucketWidth: 8,
  /** Timing band keys per print, each the sample counts of SLICES / timingBands slices in a row. */
  timingBands: 2,
  /**
   * A replay: shapes closer than this root mean square difference (px-like units: x as a share of a 150 px
   * drag, y in px), whatever the sampling; or closer than `sameTimingShapeRms` with sample counts per slice
   * differing by at most `sameTimingCounts` in all (a replay sent as recorded keeps them; a browser
   * sampling at its frame rate makes live drags of one duration alike in counts, so the shape must be close
   * too). A replay with 0.7 px of noise on every sample stays under them (with 1.5 px, about 9 in 10); two
   * live drags of the human model meet them about once in 100,000 pairs, sampled at random or at 60 Hz
   * (trajectory-print.test.ts).
   */
  sameShapeRms: 0.3,
  sameTimingShapeRms: 0.6,
  sameTimingCounts: 3,
} as const;

/** A drag's print: the averaged shape (x then y per slice, integers) and its band keys. */
export interface TrajectoryPrint {
  vector: Int16Array;
  bands: string[];
}

/** The print of a slide submission, or null when it has none (keyboard runs, malformed or too short). */
export function slidePrint(submission: unknown): TrajectoryPrint | null {
  const parsed = slideSubmissionSchema.safeParse(submission);
  if (!parsed.success || parsed.data.input === 'keyboard') return null;
  const vector = printVector(parsed.data.trajectory);
  return vector && { vector, bands: bandKeys(vector) };
}

/** x share and centred y per slice of the drag's time; null when the drag has no time or no distance. */
export function printVector(points: readonly TrajectoryPoint[]): Int16Array | null {
  if (points.length < 2) return null;
  const first = points[0] as TrajectoryPoint;
  const last = points[points.length - 1] as TrajectoryPoint;
  const duration = last.t - first.t;
  const distance = last.x - first.x;
  if (!(duration > 0) || !(Math.abs(distance) >= 1)) return null;
  const xs: number[] = [];
  const ys: number[] = [];
  let i = 0;
  for (let s = 0; s < SLICES; s++) {
    let sx = 0;
    let sy = 0;
    for (let r = 0; r < READS_PER_SLICE; r++) {
      const t = first.t + (duration * (s * READS_PER_SLICE + r + 0.5)) / (SLICES * READS_PER_SLICE);
      while (i < points.length - 2 && (points[i + 1] as TrajectoryPoint).t < t) i++;
      const a = points[i] as TrajectoryPoint;
      const b = points[i + 1] as TrajectoryPoint;
      const k = b.t > a.t ? Math.min(1, Math.max(0, (t - a.t) / (b.t - a.t))) : 1;
      sx += a.x + (b.x - a.x) * k;
      sy += a.y + (b.y - a.y) * k;
    }
    xs.push(((sx / READS_PER_SLICE - first.x) / distance) * X_UNITS);
    ys.push((sy / READS_PER_SLICE) * Y_UNITS);
  }
  // How the samples fall in time: a replay keeps its recording's sampling instants, scaled.
  const counts = new Array<number>(SLICES).fill(0);
  for (const p of points) {
    const slice = Math.min(SLICES - 1, Math.floor(((p.t - first.t) / duration) * SLICES));
    counts[slice] = (counts[slice] as number) + 1;
  }
  const meanY = ys.reduce((a, b) => a + b, 0) / SLICES;
  const clamp = (v: number) => Math.max(-32_000, Math.min(32_000, Math.round(v)));
  return Int16Array.from([...xs.map(clamp), ...ys.map((y) => clamp(y - meanY)), ...counts.map(clamp)]);
}

/** Per component: print units to px-like units (x share of a 150 px drag, y in px). */
const weights = [
  ...Array.from({ length: SLICES }, () => 150 / X_UNITS),
  ...Array.from({ length: SLICES }, () => 1 / Y_UNITS),
];

/** Fixed projections and offsets (the same on every instance, so every instance finds the others' keys). */
const projections = (() => {
  const rng = seededRandom('gatehouse trajectory print');
  const gaussian = () =>
    Math.sqrt(-2 * Math.log(Math.max(rng.next(), 1e-12))) * Math.cos(2 * Math.PI * rng.next());
  const { bands, projectionsPerBand, bucketWidth } = TRAJECTORY_PRINT;
  return Array.from({ length: bands * projectionsPerBand }, () => ({
    a: weights.map((w) => gaussian() * w),
    b: range(rng, 0, bucketWidth),
  }));
})();

/**
 * The band keys of a print: `s<band>:<bucket>,…` from random projections of the shape, and
 * `t<band>:<count>,…` from the sample counts of a few consecutive slices (a replay keeps them exactly).
 */
export function bandKeys(vector: Int16Array): string[] {
  const { bands, projectionsPerBand, bucketWidth, timingBands } = TRAJECTORY_PRINT;
  const keys: string[] = [];
  for (let band = 0; band < bands; band++) {
    const buckets: number[] = [];
    for (let j = 0; j < projectionsPerBand; j++) {
      const { a, b } = projections[band * projectionsPerBand + j] as { a: number[]; b: number };
      let dot = 0;
      for (let c = 0; c < SHAPE_LENGTH; c++) dot += (a[c] as number) * (vector[c] as number);
      buckets.push(Math.floor((dot + b) / bucketWidth));
    }
    keys.push(`s${band}:${buckets.join(',')}`);
  }
  const per = SLICES / timingBands;
  for (let band = 0; band < timingBands; band++)
    keys.push(
      `t${band}:${Array.from(vector.subarray(SHAPE_LENGTH + band * per, SHAPE_LENGTH + (band + 1) * per)).join(',')}`,
    );
  return keys;
}

/** Root mean square difference of two prints' shapes, in px-like units. */
export function shapeDistance(a: Int16Array, b: Int16Array): number {
  let sum = 0;
  for (let c = 0; c < SHAPE_LENGTH; c++)
    sum += (((a[c] as number) - (b[c] as number)) * (weights[c] as number)) ** 2;
  return Math.sqrt(sum / SHAPE_LENGTH);
}

/** Total difference of two prints' sample counts per slice. */
export function timingDistance(a: Int16Array, b: Int16Array): number {
  let sum = 0;
  for (let c = SHAPE_LENGTH; c < PRINT_LENGTH; c++) sum += Math.abs((a[c] as number) - (b[c] as number));
  return sum;
}

/**
 * Whether `b` replays `a` (or the other way round): the same shape within a replay's noise, or a shape
 * a little further off sampled at the same instants.
 */
export function nearDuplicate(a: Int16Array, b: Int16Array): boolean {
  if (a.length !== PRINT_LENGTH || b.length !== PRINT_LENGTH) return false;
  const shape = shapeDistance(a, b);
  const p = TRAJECTORY_PRINT;
  return (
    shape < p.sameShapeRms || (shape < p.sameTimingShapeRms && timingDistance(a, b) <= p.sameTimingCounts)
  );
}

/** A print's vector as text for a store (base64 of its little-endian int16s), and back. */
export const encodePrint = (vector: Int16Array): string =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
export function decodePrint(text: string): Int16Array | null {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== PRINT_LENGTH * 2) return null;
  const copy = new Uint8Array(bytes);
  return new Int16Array(copy.buffer);
}
