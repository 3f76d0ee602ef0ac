import { type Answer, type Envelope, GatehouseConnectionError } from './errors.ts';
import { DEFAULT_RETRY, type Outcome, parseRetryAfter, type RetryPolicy, retryDelay } from './retry.ts';

/**
 * How the SDK reaches Gatehouse: one POST, with a timeout per attempt and the retry policy, to the main
 * API at `baseUrl`. The one place that knows hosts, so continuity (issue 4) plugs in here: see
 * `validationRoute`.
 */

export interface TransportConfig {
  baseUrl: string;
  appKey: string;
  appSecret: string;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  maxRetries: number;
  /** Injected by tests; `setTimeout` otherwise. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface Call {
  path: string;
  /** JSON (validate) or form-urlencoded (server-token issuance, as the spec shows it). */
  body: { json: object } | { form: URLSearchParams };
  retry?: Partial<Omit<RetryPolicy, 'maxRetries'>>;
}

/** Where a token is validated: a base URL and the path on it. */
export interface Route {
  baseUrl: string;
  path: string;
}

export const USER_AGENT = 'gatehouse-node/0.1.0';

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Transport {
  readonly #config: TransportConfig;

  constructor(config: TransportConfig) {
    this.#config = config;
  }

  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /**
   * Where a pass token of this prefix is validated.
   *
   * ISSUE 4 (continuity) — NOT DONE. When the main API is down, `offline_` tokens must go to the backup
   * API hosts (names beginning with `fallbackapiv1.`, `POST /api/validate`) with fallback from one to the
   * other, switching only after a real failure and back on recovery. None of that exists in this SDK yet:
   * today every token, `offline_` included, is sent to the main API's `POST /v1/validate` (which validates
   * `offline_` tokens against the consumption the standby recorded), so while the main API is unreachable
   * an `offline_` token gets a GatehouseConnectionError, never a wrong verdict.
   */
  validationRoute(_token: string): Route[] {
    return [{ baseUrl: this.#config.baseUrl, path: '/v1/validate' }];
  }

  /** Sends one logical call to `route` (default: the main API), retrying as the policy says; returns the final answer. */
  async send(call: Call, route: Route = { baseUrl: this.#config.baseUrl, path: call.path }): Promise<Answer> {
    const policy: RetryPolicy = { ...DEFAULT_RETRY, ...call.retry, maxRetries: this.#config.maxRetries };
    const url = route.baseUrl + route.path;
    const sleep = this.#config.sleep ?? sleepFor;
    for (let retry = 0; ; retry++) {
      const result = await this.#attempt(url, call);
      const outcome: Outcome =
        'failure' in result
          ? { kind: 'network' }
          : {
              kind: 'answer',
              status: result.status,
              error: result.envelope?.code === -1 ? result.envelope.error : null,
              retryAfterSeconds: result.retryAfterSeconds,
            };
      const delay = retryDelay(outcome, retry, policy, this.#config.random);
      if (delay === null) {
        if ('failure' in result)
          throw connectionError(url, result.failure, retry + 1, this.#config.timeoutMs);
        return result;
      }
      await sleep(delay);
    }
  }

  async #attempt(url: string, call: Call): Promise<Answer | { failure: unknown }> {
    const { appKey, appSecret, timeoutMs } = this.#config;
    const json = 'json' in call.body;
    const headers = {
      'X-App-Key': appKey,
      'X-App-Secret': appSecret,
      'Content-Type': json ? 'application/json' : 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
    };
    const body = 'json' in call.body ? JSON.stringify(call.body.json) : call.body.form.toString();
    try {
      // One signal for the request and the body: a stalled body counts against the same timeout.
      const res = await this.#config.fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      return {
        url,
        status: res.status,
        requestId: res.headers.get('x-request-id'),
        retryAfterSeconds: parseRetryAfter(res.headers.get('retry-after')),
        envelope: parseEnvelope(text),
      };
    } catch (failure) {
      return { failure };
    }
  }
}

/** The envelope, when the body is one; anything else (a proxy's HTML page, truncated JSON) is null. */
export function parseEnvelope(text: string): Envelope | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (v.code === 0 && typeof v.data === 'object' && v.data !== null) {
    return { code: 0, data: v.data as Record<string, unknown> };
  }
  if (v.code === -1 && typeof v.error === 'string') {
    return { code: -1, error: v.error, message: typeof v.message === 'string' ? v.message : v.error };
  }
  return null;
}

/** The error for an attempt that got no HTTP answer: `timeout` or `network_error`, with the system's reason. */
export function connectionError(url: string, failure: unknown, attempts: number, timeoutMs: number) {
  const timedOut = (failure as Error)?.name === 'TimeoutError';
  const reason = timedOut ? `no answer within ${timeoutMs} ms` : networkReason(failure);
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  return new GatehouseConnectionError(`Could not reach Gatehouse at ${url} (${tries}): ${reason}.`, {
    code: timedOut ? 'timeout' : 'network_error',
    cause: failure,
  });
}

/** The system error code under fetch's "fetch failed" (ECONNREFUSED, ENOTFOUND...), else the message. */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[]; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  const codes = new Set(cause?.errors?.map((e) => e.code).filter(Boolean));
  if (codes.size === 1) return [...codes][0]!;
  return cause?.message ?? (err as Error)?.message ?? String(err);
}
