import { PREFIX } from '@gatehouse/core/tokens/prefix';
import { type Answer, type Envelope, GatehouseConnectionError } from './errors.ts';
import { DEFAULT_RETRY, type Outcome, parseRetryAfter, type RetryPolicy, retryDelay } from './retry.ts';

/**
 * How the SDK reaches Gatehouse: one logical call over a route of hosts, with a timeout per attempt and
 * the retry policy. The one place that knows hosts: `validationRoute` sends `offline_` tokens to the
 * backup API hosts first (continuity, docs/protocol.md "Standby"), everything else to the main API.
 */

export interface TransportConfig {
  baseUrl: string;
  appKey: string;
  appSecret: string;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  maxRetries: number;
  /** The backup API hosts to try for `offline_` tokens (`duringOutage`: a known list, never refreshed first). */
  backupHosts?: (duringOutage: boolean) => Promise<string[]>;
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

/** Where a call goes: a base URL and the path on it. */
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
   * Where a pass token is validated, in order. `offline_` tokens (minted by the standby while the main
   * API was down): each backup API host's `POST /api/validate`, then the main API's `POST /v1/validate`,
   * which accepts them too and honours the consumption the standby recorded. Every other token: the main
   * API only (`pt_` and `dg_` live in the main database; no backup host can answer for them). Asking for
   * the route also discovers the backup hosts on first contact, whatever the token.
   */
  async validationRoute(token: string): Promise<Route[]> {
    const main: Route = { baseUrl: this.#config.baseUrl, path: '/v1/validate' };
    const offline = token.startsWith(PREFIX.offline);
    const backups = (await this.#config.backupHosts?.(offline)) ?? [];
    if (!offline) return [main];
    return [...backups.map((baseUrl) => ({ baseUrl, path: '/api/validate' })), main];
  }

  /** Learns the backup hosts when due (first contact), without sending anything else. */
  async discover(): Promise<void> {
    await this.#config.backupHosts?.(false);
  }

  /**
   * Sends one logical call over `route` (default: the main API) and returns the final answer. Each host
   * but the last gets one attempt and is left for the next on no answer or a 5xx; `service_online` from
   * one of them (a standby saying the main API is up) jumps straight to the last, the main API. Only the
   * last host is retried, as the policy says. Any other answer, a 4xx included, is final wherever it
   * comes from. The caller sends the same body, idempotency key included, on every attempt.
   */
  async send(
    call: Call,
    route: Route[] = [{ baseUrl: this.#config.baseUrl, path: call.path }],
  ): Promise<Answer> {
    const policy: RetryPolicy = { ...DEFAULT_RETRY, ...call.retry, maxRetries: this.#config.maxRetries };
    const sleep = this.#config.sleep ?? sleepFor;
    const tried: string[] = [];
    for (let i = 0; i < route.length; i++) {
      const url = route[i]!.baseUrl + route[i]!.path;
      const last = i === route.length - 1;
      for (let retry = 0; ; retry++) {
        const result = await this.#attempt(url, call);
        const outcome = outcomeOf(result);
        if (!last) {
          if (!failsOver(outcome)) return result as Answer;
          tried.push(route[i]!.baseUrl);
          if (outcome.kind === 'answer' && outcome.error === 'service_online') i = route.length - 2;
          break;
        }
        const delay = retryDelay(outcome, retry, policy, this.#config.random);
        if (delay === null) {
          if ('failure' in result)
            throw connectionError(url, result.failure, retry + 1, this.#config.timeoutMs, tried);
          return result;
        }
        await sleep(delay);
      }
    }
    throw new Error('Transport.send needs a route of at least one host.');
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

/** What an attempt produced, as far as retrying and failing over are concerned. */
function outcomeOf(result: Answer | { failure: unknown }): Outcome {
  if ('failure' in result) return { kind: 'network' };
  return {
    kind: 'answer',
    status: result.status,
    error: result.envelope?.code === -1 ? result.envelope.error : null,
    retryAfterSeconds: result.retryAfterSeconds,
  };
}

/** A host that gave no answer, a 5xx, or `service_online` is left for the next host of the route. */
export function failsOver(outcome: Outcome): boolean {
  return outcome.kind === 'network' || outcome.status >= 500;
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
    const message = typeof v.message === 'string' ? v.message : v.error;
    // A token verdict carries what is known of the token in data (its action, the client IP check).
    const data =
      typeof v.data === 'object' && v.data !== null ? (v.data as Record<string, unknown>) : undefined;
    return { code: -1, error: v.error, message, ...(data ? { data } : {}) };
  }
  return null;
}

/** The error for an attempt that got no HTTP answer: `timeout` or `network_error`, with the system's reason. */
export function connectionError(
  url: string,
  failure: unknown,
  attempts: number,
  timeoutMs: number,
  tried: string[] = [],
) {
  const timedOut = (failure as Error)?.name === 'TimeoutError';
  const reason = timedOut ? `no answer within ${timeoutMs} ms` : networkReason(failure);
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  const before = tried.length ? `; the backup hosts ${tried.join(', ')} failed first` : '';
  return new GatehouseConnectionError(`Could not reach Gatehouse at ${url} (${tries}): ${reason}${before}.`, {
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
