/**
 * Every request the widget makes goes through here. Answers are the API envelope: `{code: 0, data}` or
 * `{code: -1, error, message}`. Which host a request goes to (the main API or a standby host) is decided
 * in route.ts, from the rules in failover.ts.
 */

/** An error as the widget reports it to `onError`: the API's error code, or one of the widget's own. */
export class GatehouseError extends Error {
  override name = 'GatehouseError';
  /**
   * The spec's error code (`server_token_required`...), or `network_error`, `timeout`, `bad_response`,
   * `pow_failed`.
   */
  code: string;
  /** HTTP status, 0 when no answer came. */
  status: number;
  /** Seconds from Retry-After, when the API sent one. */
  retryAfter?: number;
  constructor(code: string, message: string, status = 0, retryAfter?: number) {
    super(message);
    this.code = code;
    this.status = status;
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
  }
}

/** `url` without trailing slashes, so paths can be appended. */
export const trimBase = (url: string): string => url.replace(/\/+$/, '');

/**
 * Sends a request and resolves with the envelope's `data`; rejects with a GatehouseError (`timeout` when
 * no answer came within `timeoutMs`), or with the signal's reason when the caller aborted.
 */
export async function request<T>(
  url: string,
  body?: unknown,
  signal?: AbortSignal,
  timeoutMs = 0,
): Promise<T> {
  // One controller for the caller's signal and the timeout (AbortSignal.any is too recent for Safari 15).
  const own = new AbortController();
  const forward = () => own.abort();
  signal?.addEventListener('abort', forward);
  if (signal?.aborted) own.abort();
  let timedOut = false;
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          own.abort();
        }, timeoutMs)
      : undefined;
  const failed = (error: unknown) => {
    if (signal?.aborted) return signal.reason ?? error;
    if (timedOut) return new GatehouseError('timeout', `No answer from ${url} within ${timeoutMs} ms.`);
    return new GatehouseError('network_error', String((error as Error)?.message ?? error));
  };
  try {
    let res: Response;
    try {
      res = await fetch(url, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined
          ? {}
          : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
        credentials: 'omit',
        signal: own.signal,
      });
    } catch (error) {
      throw failed(error);
    }
    let envelope: { code?: number; data?: T; error?: string; message?: string } | undefined;
    try {
      envelope = await res.json();
    } catch (error) {
      if (own.signal.aborted) throw failed(error);
    }
    if (res.ok && envelope?.code === 0) return envelope.data as T;
    const retryAfter = Number(res.headers.get('Retry-After')) || undefined;
    throw new GatehouseError(
      envelope?.error ?? 'bad_response',
      envelope?.message ?? `Unexpected answer from the verification service (HTTP ${res.status}).`,
      res.status,
      retryAfter,
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', forward);
  }
}

/** Posts JSON to `base + path`; resolves with `data`, rejects with a GatehouseError. */
export function post<T>(
  base: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
  timeoutMs = 0,
): Promise<T> {
  return request<T>(trimBase(base) + path, body, signal, timeoutMs);
}
