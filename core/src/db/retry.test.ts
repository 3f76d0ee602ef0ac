import { DrizzleQueryError } from 'drizzle-orm/errors';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRetryableTransactionError, withRetry } from './retry.ts';

/** A driver-shaped error carrying a SQLSTATE, as postgres.js and PGlite throw them. */
function sqlError(code: string): Error & { code: string } {
  return Object.assign(new Error(`sqlstate ${code}`), { code });
}

/** A function that throws `errors` in order, then returns 'done'; counts its calls. */
function failing(...errors: unknown[]) {
  const fn = vi.fn(async () => {
    const next = errors.shift();
    if (next !== undefined) throw next;
    return 'done';
  });
  return fn;
}

const fast = { baseDelayMs: 1, maxDelayMs: 2 };

describe('isRetryableTransactionError', () => {
  it('recognises SQLSTATE 40001 only', () => {
    expect(isRetryableTransactionError(sqlError('40001'))).toBe(true);
    expect(isRetryableTransactionError(sqlError('40P01'))).toBe(false);
    expect(isRetryableTransactionError(sqlError('23505'))).toBe(false);
    expect(isRetryableTransactionError({ code: 40001 })).toBe(false);
  });

  it('answers false for values that are not errors', () => {
    for (const value of [undefined, null, '40001', 40001, {}, new Error('40001')]) {
      expect(isRetryableTransactionError(value)).toBe(false);
    }
  });

  it('looks through cause chains, as drizzle wraps driver errors', () => {
    const wrapped = new DrizzleQueryError('update pass_tokens set ...', [], sqlError('40001'));
    expect(isRetryableTransactionError(wrapped)).toBe(true);
    const deeper = new Error('outer', { cause: new Error('middle', { cause: wrapped }) });
    expect(isRetryableTransactionError(deeper)).toBe(true);
    const other = new DrizzleQueryError('insert ...', [], sqlError('23505'));
    expect(isRetryableTransactionError(new Error('outer', { cause: other }))).toBe(false);
  });

  it('terminates on a cyclic cause chain', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isRetryableTransactionError(a)).toBe(false);
  });
});

describe('withRetry', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('runs a function again after serialization failures and returns its result', async () => {
    const fn = failing(sqlError('40001'), sqlError('40001'));
    await expect(withRetry(fn, fast)).resolves.toBe('done');
    expect(fn).toHaveBeenCalledTimes(3);
  });

  it('retries a serialization failure wrapped in causes', async () => {
    const wrapped = new DrizzleQueryError('select 1', [], sqlError('40001'));
    const fn = failing(new Error('transaction failed', { cause: wrapped }));
    await expect(withRetry(fn, fast)).resolves.toBe('done');
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('passes any other error through at once', async () => {
    const unique = sqlError('23505');
    const fn = failing(unique);
    await expect(withRetry(fn, fast)).rejects.toBe(unique);
    expect(fn).toHaveBeenCalledTimes(1);

    const plain = new Error('boom');
    const fn2 = failing(plain, sqlError('40001'));
    await expect(withRetry(fn2, fast)).rejects.toBe(plain);
    expect(fn2).toHaveBeenCalledTimes(1);
  });

  it('gives up after the configured number of attempts with the last error', async () => {
    const errors = Array.from({ length: 10 }, () => sqlError('40001'));
    const fn = failing(...errors);
    await expect(withRetry(fn, { ...fast, attempts: 4 })).rejects.toBe(errors[3]);
    expect(fn).toHaveBeenCalledTimes(4);
  });

  it('makes six attempts by default', async () => {
    const fn = vi.fn(async () => {
      throw sqlError('40001');
    });
    await expect(withRetry(fn, fast)).rejects.toMatchObject({ code: '40001' });
    expect(fn).toHaveBeenCalledTimes(6);
  });

  it('with attempts: 1 never retries', async () => {
    const fn = failing(sqlError('40001'));
    await expect(withRetry(fn, { ...fast, attempts: 1 })).rejects.toMatchObject({ code: '40001' });
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('waits between attempts, never longer than maxDelayMs', async () => {
    // Full jitter drawn at its top: each wait is min(maxDelayMs, baseDelayMs × 2^attempt).
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const fn = failing(sqlError('40001'), sqlError('40001'));
    const started = performance.now();
    await expect(withRetry(fn, { baseDelayMs: 100, maxDelayMs: 50 })).resolves.toBe('done');
    const elapsed = performance.now() - started;
    expect(fn).toHaveBeenCalledTimes(3);
    // Two capped waits of about 50 ms; uncapped they would be 200 + 400 ms. Node measures timers from
    // its cached loop time, so each can end a few ms early by performance.now(): hence 90, not 99.9.
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(elapsed).toBeLessThan(450);
  });
});
