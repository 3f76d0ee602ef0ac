/**
 * Every request the widget makes goes through here, so that failover to the standby hosts (a later issue)
 * has one place to live. Answers are the API envelope: `{code: 0, data}` or `{code: -1, error, message}`.
 */

/** An error as the widget reports it to `onError`: the API's error code, or one of the widget's own. */
export class GatehouseError extends Error {
  override name = 'GatehouseError';
  /** The spec's error code (`server_token_required`...), or `network_error`, `bad_response`, `pow_failed`. */
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

/** Posts JSON to `apiServer + path`; resolves with `data`, rejects with a GatehouseError. */
export async function post<T>(
  apiServer: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(apiServer.replace(/\/+$/, '') + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new GatehouseError('network_error', String((error as Error)?.message ?? error));
  }
  let envelope: { code?: number; data?: T; error?: string; message?: string } | undefined;
  try {
    envelope = await res.json();
  } catch {}
  if (res.ok && envelope?.code === 0) return envelope.data as T;
  const retryAfter = Number(res.headers.get('Retry-After')) || undefined;
  throw new GatehouseError(
    envelope?.error ?? 'bad_response',
    envelope?.message ?? `Unexpected answer from the verification service (HTTP ${res.status}).`,
    res.status,
    retryAfter,
  );
}
