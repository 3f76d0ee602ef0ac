import { createCanvas } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { addNoise, NOISE_AMPLITUDE } from './backgrounds.ts';
import { seededRandom } from './random.ts';

const W = 120;
const H = 60;

/** A mid-grey canvas with noise from `seed`, and a function that reads its red channel. */
function noised(seed: string) {
  const canvas = createCanvas(W, H);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = 'rgb(128, 128, 128)';
  ctx.fillRect(0, 0, W, H);
  addNoise(ctx, seededRandom(seed), W, H, NOISE_AMPLITUDE);
  return () => {
    const d = ctx.getImageData(0, 0, W, H).data;
    return Array.from({ length: W * H }, (_, i) => d[i * 4] as number);
  };
}

describe('addNoise', () => {
  it('moves mid-grey by up to the amplitude, grey, over the whole range', () => {
    const canvas = createCanvas(W, H);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = 'rgb(128, 128, 128)';
    ctx.fillRect(0, 0, W, H);
    addNoise(ctx, seededRandom('range'), W, H, NOISE_AMPLITUDE);
    const d = ctx.getImageData(0, 0, W, H).data;
    const values = new Set<number>();
    let sum = 0;
    let notGrey = 0;
    let furthest = 0;
    for (let i = 0; i < d.length; i += 4) {
      const v = d[i] as number;
      if (d[i + 1] !== v || d[i + 2] !== v || d[i + 3] !== 255) notGrey++;
      furthest = Math.max(furthest, Math.abs(v - 128));
      values.add(v);
      sum += v;
    }
    expect(notGrey).toBe(0);
    expect(furthest).toBeLessThanOrEqual(NOISE_AMPLITUDE + 1);
    expect(values.size).toBeGreaterThanOrEqual(2 * NOISE_AMPLITUDE - 2);
    expect(Math.abs(sum / (W * H) - 128)).toBeLessThan(1.5);
  });

  it('gives every image its own noise, even through the reused scratch canvas', () => {
    // Both images noised before either is read: the second must not show through the first.
    const readA = noised('a');
    const readB = noised('b');
    const a = readA();
    const b = readB();
    expect(a).toEqual(noised('a')());
    expect(b).toEqual(noised('b')());
    const same = a.filter((v, i) => v === b[i]).length;
    // Independent noise agrees on about one pixel in 2 × amplitude + 1 (mid-grey doubles one value).
    expect(same / a.length).toBeLessThan(0.1);
  });
});
