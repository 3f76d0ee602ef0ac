import { describe, expect, it } from 'vitest';
import { backoff, DEFAULT_RETRY, parseRetryAfter, type RetryPolicy, retryDelay } from './retry.ts';

const policy: RetryPolicy = { ...DEFAULT_RETRY, maxRetries: 5 };
const network = { kind: 'network' } as const;
const answer = (status: number, error: string | null = null, retryAfterSeconds: number | null = null) =>
  ({ kind: 'answer', status, error, retryAfterSeconds }) as const;

describe('retry policy', () => {
  it('backs off exponentially with jitter between half and all of the step, under the ceiling', () => {
    for (let retry = 0; retry < 8; retry++) {
      const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
      expect(backoff(retry, policy, () => 0)).toBe(step / 2);
      expect(backoff(retry, policy, () => 0.999999)).toBeLessThanOrEqual(step);
      expect(backoff(retry, policy, () => 0.999999)).toBeLessThanOrEqual(policy.maxDelayMs);
    }
    expect(backoff(10, policy, () => 0.5)).toBe(1500);
  });

  it('retries network errors and 5xx only, never answers, never service_online', () => {
    expect(retryDelay(network, 0, policy)).not.toBeNull();
    expect(retryDelay(answer(500), 0, policy)).not.toBeNull();
    expect(retryDelay(answer(503, 'service_unavailable'), 0, policy)).not.toBeNull();
    expect(retryDelay(answer(503, 'service_online'), 0, policy)).toBeNull();
    for (const status of [200, 400, 401, 404, 409, 410, 429])
      expect(retryDelay(answer(status), 0, policy)).toBeNull();
  });

  it('stops after maxRetries', () => {
    expect(retryDelay(network, 4, policy)).not.toBeNull();
    expect(retryDelay(network, 5, policy)).toBeNull();
    expect(retryDelay(network, 0, { ...policy, maxRetries: 0 })).toBeNull();
  });

  it('retries 429 only when the call allows it, after Retry-After, within the bound', () => {
    const rl = { ...policy, retryRateLimited: true };
    expect(retryDelay(answer(429, 'rate_limit_exceeded', 2), 0, rl, () => 0)).toBe(2000);
    expect(retryDelay(answer(429, 'rate_limit_exceeded', null), 0, rl, () => 0)).toBe(1000);
    expect(retryDelay(answer(429, 'rate_limit_exceeded', 11), 0, rl)).toBeNull();
    expect(retryDelay(answer(429, 'rate_limit_exceeded', 1), 5, rl)).toBeNull();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:05 GMT', now)).toBe(5);
  });
});
