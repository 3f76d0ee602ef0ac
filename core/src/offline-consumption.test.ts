import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryConsumptionStore, RETRY_WINDOW_MS } from './offline-consumption.ts';

describe('MemoryConsumptionStore', () => {
  afterEach(() => vi.useRealTimers());

  it('consumes once; a same-key retry is recognised only within the retry window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = new MemoryConsumptionStore();
    expect(await store.consumeOnce('t1', 300, 'k1')).toBe('consumed');
    expect(await store.consumeOnce('t1', 300, 'k1')).toBe('same_retry');
    expect(await store.consumeOnce('t1', 300, 'k2')).toBe('already_used');
    expect(await store.consumeOnce('t1', 300)).toBe('already_used');
    vi.setSystemTime(Date.now() + RETRY_WINDOW_MS);
    expect(await store.consumeOnce('t1', 300, 'k1')).toBe('already_used');
  });
  it('counts attempts per id', async () => {
    const store = new MemoryConsumptionStore();
    expect(await store.countAttempt('c', 60)).toBe(1);
    expect(await store.countAttempt('c', 60)).toBe(2);
    expect(await store.countAttempt('d', 60)).toBe(1);
  });
});
