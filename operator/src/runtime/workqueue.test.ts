import { describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './workqueue.ts';

const fast = { baseMs: 10, maxMs: 80 };

describe('WorkQueue', () => {
  it('dedupes: a key waiting in the queue is queued once however often it is added', async () => {
    const q = new WorkQueue(fast);
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands one key to two workers: a key added while processing comes back after done()', async () => {
    const q = new WorkQueue(fast);
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => {
      second = k;
    });
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(first as string);
    await Promise.resolve();
    expect(second).toBe('a');
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const q = new WorkQueue(fast);
    const pending = q.get();
    q.add('x');
    expect(await pending).toBe('x');
  });

  it('backs off per key, exponentially, capped, and forget() resets it', () => {
    vi.useFakeTimers();
    try {
      const retries: [string, number][] = [];
      const q = new WorkQueue(fast, { onRetry: (k, d) => retries.push([k, d]) });
      for (let i = 0; i < 5; i++) q.addRateLimited('a');
      q.addRateLimited('b');
      expect(retries).toEqual([
        ['a', 10],
        ['a', 20],
        ['a', 40],
        ['a', 80],
        ['a', 80],
        ['b', 10],
      ]);
      expect(q.failures('a')).toBe(5);
      q.forget('a');
      q.addRateLimited('a');
      expect(retries.at(-1)).toEqual(['a', 10]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('addAfter keeps the earliest of several delays for one key', () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue(fast);
      q.addAfter('a', 1000);
      q.addAfter('a', 100);
      q.addAfter('a', 5000);
      vi.advanceTimersByTime(99);
      expect(q.length).toBe(0);
      vi.advanceTimersByTime(1);
      expect(q.length).toBe(1);
      vi.advanceTimersByTime(10_000);
      expect(q.length).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('shutdown releases waiting workers and ignores later adds', async () => {
    const q = new WorkQueue(fast);
    const pending = q.get();
    q.shutdown();
    expect(await pending).toBeUndefined();
    q.add('a');
    expect(await q.get()).toBeUndefined();
  });
});

describe('WorkQueue.addFirst', () => {
  it('puts a key ahead of every waiting key, or moves it there, once', async () => {
    const q = new WorkQueue(fast);
    for (const k of ['a', 'b', 'c']) q.add(k);
    q.addFirst('z');
    q.addFirst('c');
    expect(q.length).toBe(4);
    const order = [];
    for (let i = 0; i < 4; i++) order.push(await q.get());
    expect(order).toEqual(['c', 'z', 'a', 'b']);
  });

  it('brings a key added while it is processed back at the front after done()', async () => {
    const q = new WorkQueue(fast);
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('b');
    q.add('c');
    q.addFirst('a');
    expect(q.length).toBe(2);
    q.done('a');
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('hands the key straight to a waiting worker', async () => {
    const q = new WorkQueue(fast);
    const waiting = q.get();
    q.addFirst('a');
    expect(await waiting).toBe('a');
    expect(q.length).toBe(0);
  });
});
