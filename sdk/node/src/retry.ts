/**
 * Retries as data: what is retried, how long to wait, and the ceiling. Only outcomes where a second try can
 * give a different answer are retried: no HTTP answer at all, or a 5xx (never `service_online`, which says
 * the URL is wrong). A 4xx is an answer. Validation stays safe to retry because the client sends the same
 * idempotency key on every attempt of one logical call.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 requests). */
  maxRetries: number;
  /** First backoff; each retry doubles it. */
  baseDelayMs: number;
  /** Ceiling of one backoff, before jitter. */
  maxDelayMs: number;
  /**
   * Whether a 429 is retried after the API's Retry-After (server-token issuance: the spec says back off
   * and retry). A Retry-After above `maxRetryAfterMs` is not waited for: the error is thrown at once.
   */
  retryRateLimited: boolean;
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: Omit<RetryPolicy, 'maxRetries'> = {
  baseDelayMs: 200,
  maxDelayMs: 2_000,
  retryRateLimited: false,
  maxRetryAfterMs: 10_000,
};

/** What one attempt produced, as far as the retry decision is concerned. */
export type Outcome =
  | { kind: 'network' }
  | { kind: 'answer'; status: number; error: string | null; retryAfterSeconds: number | null };

/** How long to wait before retry number `retry` (0-based), or null to stop and report the outcome. */
export function retryDelay(
  outcome: Outcome,
  retry: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | null {
  if (retry >= policy.maxRetries) return null;
  if (outcome.kind === 'network') return backoff(retry, policy, random);
  if (outcome.status >= 500 && outcome.error !== 'service_online') return backoff(retry, policy, random);
  if (outcome.status === 429 && policy.retryRateLimited) {
    const afterMs = (outcome.retryAfterSeconds ?? 1) * 1000;
    if (afterMs > policy.maxRetryAfterMs) return null;
    // A little jitter on top, so instances throttled together do not come back in the same millisecond.
    return afterMs + Math.floor(random() * 100);
  }
  return null;
}

/** Exponential backoff with "equal jitter": half the step for sure, the other half random; capped. */
export function backoff(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(step / 2 + random() * (step / 2));
}

/** Reads Retry-After as seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d{1,6}$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
