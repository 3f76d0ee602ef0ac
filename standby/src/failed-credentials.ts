import { GatehouseError } from '@gatehouse/core/errors';
import { RateLimiterMemory } from 'rate-limiter-flexible';

/** Wrong credentials a source may present per window before it is refused. */
export const FAILED_CREDENTIALS_PER_SOURCE = 10;
export const FAILED_CREDENTIALS_WINDOW_SECONDS = 60;

/**
 * Counts a source's wrong credentials at the standby's internal endpoint (the operator's mode switch), in
 * this process: the endpoint has one legitimate caller, which never fails, so a per-process count is
 * enough to stop a guesser without a shared store the standby must not depend on during an outage.
 */
export function failedCredentials() {
  const failures = new RateLimiterMemory({
    points: 1_000_000_000,
    duration: FAILED_CREDENTIALS_WINDOW_SECONDS,
  });
  return {
    /** Rejects with 429 `rate_limited` and Retry-After once `source` has failed too often in the window. */
    async check(source: string): Promise<void> {
      const counted = await failures.get(source);
      if (!counted || counted.consumedPoints < FAILED_CREDENTIALS_PER_SOURCE) return;
      throw new GatehouseError(
        'rate_limited',
        'Too many failed authentication attempts from this address. Retry after the time in Retry-After.',
        { 'Retry-After': String(Math.max(1, Math.ceil(counted.msBeforeNext / 1000))) },
      );
    },
    /** Records one wrong credential from `source`. */
    async fail(source: string): Promise<void> {
      await failures.consume(source, 1);
    },
  };
}
