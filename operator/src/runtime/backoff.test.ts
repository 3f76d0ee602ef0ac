import { describe, expect, it } from 'vitest';
import { backoffDelay, KeyedBackoff, sleep } from './backoff.ts';

describe('backoff', () => {
  it('doubles from the base and stops at the ceiling', () => {
    const o = { baseMs: 100, maxMs: 1000 };
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(a, o))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('jitter spreads the delay both ways but never past the ceiling or below zero', () => {
    const o = { baseMs: 1000, maxMs: 1500, jitter: 0.5 };
    expect(backoffDelay(0, o, () => 0)).toBe(500);
    expect(backoffDelay(0, o, () => 1)).toBe(1500);
    expect(backoffDelay(3, o, () => 1)).toBe(1500);
    expect(backoffDelay(0, { baseMs: 10, maxMs: 10, jitter: 1 }, () => 0)).toBe(0);
  });

  it('counts failures per key', () => {
    const b = new KeyedBackoff({ baseMs: 1, maxMs: 100, factor: 3 });
    expect([b.next('a'), b.next('a'), b.next('b'), b.next('a')]).toEqual([1, 3, 1, 9]);
    b.forget('a');
    expect(b.failures('a')).toBe(0);
    expect(b.failures('b')).toBe(1);
  });

  it('sleep ends early when aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 10);
    await sleep(10_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
