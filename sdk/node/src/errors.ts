/**
 * The SDK's one error family. A verdict is a result, never an exception: these are thrown only when no
 * verdict could be obtained (transport, authentication, configuration, the API refusing the request).
 * Every error carries the API's error code, the HTTP status and the request id when there was an answer.
 */

export interface GatehouseErrorDetails {
  /** The API's error code (`invalid_app_secret`...) or the SDK's own (`invalid_config`, `network_error`, `timeout`). */
  code: string;
  /** HTTP status of the answer; null when there was none (configuration, network). */
  status?: number | null;
  /** The API's X-Request-Id for this answer, for support and logs; null without an answer. */
  requestId?: string | null;
  cause?: unknown;
}

/** Base type: `err instanceof GatehouseError` catches everything the SDK throws. */
export class GatehouseError extends Error {
  override name = 'GatehouseError';
  readonly code: string;
  readonly status: number | null;
  readonly requestId: string | null;
  /**
   * `validate` only: Gatehouse could not be reached to check the token (no answer, or a 502/503/504 other
   * than `service_online`), so the token may well be good. Not a verdict on the visitor: have the page
   * verify again (`Gatehouse.reverify(container)` in the widget), which fails over to a standby host and
   * yields an `offline_` token this SDK validates there. False everywhere else.
   */
  reverify = false;

  constructor(message: string, details: GatehouseErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.status = details.status ?? null;
    this.requestId = details.requestId ?? null;
  }
}

/** The client was constructed or called wrongly; nothing was sent. */
export class GatehouseConfigError extends GatehouseError {
  override name = 'GatehouseConfigError';
  constructor(message: string) {
    super(message, { code: 'invalid_config' });
  }
}

/** No HTTP answer after every retry: connection refused or reset, DNS failure, or `timeoutMs` elapsed. */
export class GatehouseConnectionError extends GatehouseError {
  override name = 'GatehouseConnectionError';
}

/** `invalid_app_key`, `invalid_app_secret` or `app_disabled`: the credentials are wrong, retrying cannot help. */
export class GatehouseAuthenticationError extends GatehouseError {
  override name = 'GatehouseAuthenticationError';
}

/** 429 after the bounded retries; `retryAfterSeconds` is the API's Retry-After when it sent one. */
export class GatehouseRateLimitError extends GatehouseError {
  override name = 'GatehouseRateLimitError';
  readonly retryAfterSeconds: number | null;
  constructor(message: string, details: GatehouseErrorDetails & { retryAfterSeconds: number | null }) {
    super(message, details);
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** The API refused the request as malformed (`invalid_request`...): a bug in the calling code. */
export class GatehouseInvalidRequestError extends GatehouseError {
  override name = 'GatehouseInvalidRequestError';
}

/** 5xx after every retry, `service_online` (a standby host was called), or an answer that is not Gatehouse's. */
export class GatehouseApiError extends GatehouseError {
  override name = 'GatehouseApiError';
}

const AUTH_CODES = new Set(['invalid_app_key', 'invalid_app_secret', 'app_disabled']);

/** What the transport hands back: the final HTTP answer, its envelope when it had one. */
export interface Answer {
  url: string;
  status: number;
  requestId: string | null;
  retryAfterSeconds: number | null;
  envelope: Envelope | null;
}

export type Envelope =
  | { code: 0; data: Record<string, unknown> }
  | { code: -1; error: string; message: string; data?: Record<string, unknown> };

/** Maps an answer that is not a success to the error to throw: the one place statuses become error types. */
export function errorFromAnswer(answer: Answer): GatehouseError {
  const { status, requestId, envelope } = answer;
  if (!envelope || envelope.code !== -1) {
    return new GatehouseApiError(
      `${answer.url} answered HTTP ${status} without a Gatehouse envelope: is baseUrl the Gatehouse API?`,
      { code: 'unexpected_response', status, requestId },
    );
  }
  const details = { code: envelope.error, status, requestId };
  if (envelope.error === 'service_online') {
    return new GatehouseApiError(
      `${envelope.message} (${answer.url} is a standby host: set baseUrl to the main API's base URL and leave failover to the SDK)`,
      details,
    );
  }
  if (AUTH_CODES.has(envelope.error)) return new GatehouseAuthenticationError(envelope.message, details);
  if (status === 429) {
    return new GatehouseRateLimitError(envelope.message, {
      ...details,
      retryAfterSeconds: answer.retryAfterSeconds,
    });
  }
  if (status >= 400 && status < 500) return new GatehouseInvalidRequestError(envelope.message, details);
  return new GatehouseApiError(envelope.message, details);
}
