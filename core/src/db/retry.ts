import { setTimeout as sleep } from 'node:timers/promises';

/** SQLSTATE 40001 (serialization failure) is how CockroachDB, and PostgreSQL under SERIALIZABLE, ask for a retry. */
export function isRetryableTransactionError(error: unknown): boolean {
  let e: unknown = error;
  // drizzle wraps driver errors; look through `cause`.
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof e === 'object' && 'code' in e && (e as { code: unknown }).code === '40001') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export interface RetryOptions {
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** Runs `fn` again on SQLSTATE 40001 with exponential backoff and full jitter; other errors pass through. */
export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 6;
  const base = options.baseDelayMs ?? 5;
  const max = options.maxDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts || !isRetryableTransactionError(error)) throw error;
      await sleep(Math.random() * Math.min(max, base * 2 ** attempt));
    }
  }
}
