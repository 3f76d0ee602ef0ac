import { describe, expect, it, vi } from 'vitest';
import { TokenBucket } from './rate-limit.ts';

describe('TokenBucket', () => {
  it('lets a burst through at once, then one request per 1/qps seconds, in order', async () => {
    let clock = 0;
    const bucket = new TokenBucket(10, 3, () => clock);
    const order: number[] = [];
    const taken = [0, 1, 2, 3, 4].map((i) => bucket.take().then(() => order.push(i)));
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([0, 1, 2]);
    clock = 100; // one token refilled (10 per second)
    await vi.waitFor(() => expect(order).toEqual([0, 1, 2, 3]));
    // The clock stands still: the fifth waits for the next token.
    await new Promise((r) => setTimeout(r, 150));
    expect(order).toEqual([0, 1, 2, 3]);
    clock = 200;
    await Promise.all(taken);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('a waiting caller whose signal aborts is refused, and the next one still served', async () => {
    let clock = 0;
    const bucket = new TokenBucket(1, 1, () => clock);
    await bucket.take();
    const stop = new AbortController();
    const waiting = bucket.take(stop.signal);
    stop.abort(new Error('term over'));
    await expect(waiting).rejects.toThrow('term over');
    clock = 1000;
    await expect(bucket.take()).resolves.toBeUndefined();
  });
});
