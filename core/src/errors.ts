/**
 * The one error type and envelope of Gatehouse. The spec fixes the envelope `{code: -1, error, message}`;
 * DESIGN.md fixes the HTTP statuses. The origin service's public SDKs read an error's code from
 * `data.error` and its text from `msg`, so every envelope carries both as well.
 */

/** Every error code the HTTP APIs answer with, and the HTTP status each one maps to. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  invalid_app_key: 401,
  invalid_app_secret: 401,
  app_disabled: 403,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  // Token verdicts: a negative answer about a token, not a failure of the request, so HTTP 200 (an
  // integration that treats any non-200 as an outage, and fails open, must never see one for a bad token).
  token_not_found: 200,
  token_already_used: 200,
  token_expired: 200,
  token_action_mismatch: 200,
  client_ip_mismatch: 200,
  challenge_not_found: 404,
  challenge_expired: 410,
  invalid_answer: 422,
  server_token_required: 403,
  server_token_invalid: 403,
  server_token_expired: 403,
  server_token_exhausted: 403,
  server_token_action_mismatch: 403,
  server_token_binding_mismatch: 403,
  domain_not_allowed: 403,
  request_rejected: 403,
  rate_limited: 429,
  rate_limit_exceeded: 429,
  quota_exceeded: 429,
  service_online: 503,
  service_unavailable: 503,
  database_unavailable: 503,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: 'The request is not shaped as the API expects.',
  unsupported_media_type: 'Unsupported Content-Type for this endpoint.',
  payload_too_large: 'The request body is too large.',
  invalid_app_key: 'Invalid App Key',
  invalid_app_secret: 'Invalid App Secret',
  app_disabled: 'This app is disabled.',
  unauthorized: 'Missing or invalid admin token.',
  not_found: 'No such route.',
  method_not_allowed: 'Method not allowed on this route.',
  token_not_found: 'Token not found',
  challenge_not_found: 'Challenge not found',
  token_already_used: 'Token already used',
  token_expired: 'Token expired',
  token_action_mismatch: 'The token was solved for another action than the one expected.',
  client_ip_mismatch: "The client IP does not match the solve-time IP under the app's reject policy.",
  challenge_expired: 'Challenge expired',
  invalid_answer: 'Invalid answer',
  server_token_required: 'This app requires a server token to start a challenge.',
  server_token_invalid: 'The server token is malformed, forged or unknown.',
  server_token_expired: 'The server token has expired.',
  server_token_exhausted: 'The server token has reached its max_uses.',
  server_token_action_mismatch: 'The server token was issued for another action.',
  server_token_binding_mismatch: 'The request does not match the server token binding.',
  domain_not_allowed: 'This page is not among the domains the app allows.',
  request_rejected: "This request was rejected by the app's risk policy.",
  rate_limited: 'Rate limited',
  rate_limit_exceeded: 'Too many issuance requests for this app. Back off and retry.',
  quota_exceeded: 'Quota exceeded',
  service_online: 'The main API is online. Call the base URL instead of the standby service.',
  service_unavailable: 'The service is not ready.',
  database_unavailable: 'The database is unreachable. Retry after the time in Retry-After.',
  internal_error: 'Internal error.',
};

/** The codes that are a verdict on a token: HTTP 200, and `data.valid: false` so every reader fails closed. */
export const TOKEN_VERDICT_CODES = [
  'token_not_found',
  'token_already_used',
  'token_expired',
  'token_action_mismatch',
  'client_ip_mismatch',
] as const satisfies readonly ErrorCode[];

export function isTokenVerdict(code: ErrorCode): boolean {
  return (TOKEN_VERDICT_CODES as readonly string[]).includes(code);
}

export interface ErrorEnvelope {
  code: -1;
  error: ErrorCode;
  message: string;
  msg: string;
  /** `{error}` for every error; a token verdict adds `valid: false` and what it knows about the token. */
  data: { error: ErrorCode; valid?: false; [detail: string]: unknown };
}

/** An error that becomes the spec's envelope; throw it anywhere, one middleware answers it. */
export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Extra fields for the envelope's `data` (a verdict's `action`, `client_ip_check`...). */
  readonly details: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message?: string,
    headers: Record<string, string> = {},
    details: Record<string, unknown> = {},
  ) {
    // A 4xx (or a 200 verdict) answers the client and is never logged with its stack: not capturing one
    // spares what an attacker's replays and wrong answers cost. Server errors keep theirs.
    const limit = Error.stackTraceLimit;
    if (ERROR_STATUS[code] < 500) Error.stackTraceLimit = 0;
    try {
      super(message ?? DEFAULT_MESSAGES[code]);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'GatehouseError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
    this.details = details;
  }

  toEnvelope(): ErrorEnvelope {
    return envelope(this.code, this.message, this.details);
  }
}

export function envelope(
  code: ErrorCode,
  message: string = DEFAULT_MESSAGES[code],
  details: Record<string, unknown> = {},
): ErrorEnvelope {
  const data = isTokenVerdict(code)
    ? { ...details, valid: false as const, error: code }
    : { ...details, error: code };
  return { code: -1, error: code, message, msg: message, data };
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, value);
}

export interface SuccessEnvelope<T> {
  code: 0;
  data: T;
}

export function success<T>(data: T): SuccessEnvelope<T> {
  return { code: 0, data };
}
