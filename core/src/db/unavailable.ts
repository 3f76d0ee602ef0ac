/**
 * Whether an error means the database cannot be reached (as opposed to a query it refused): the caller
 * answers 503 and retries later instead of 500. Drizzle wraps the driver's error in `cause`, Node's
 * connection attempts over several addresses in an AggregateError, so the whole chain is searched.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && unavailableCode(e.code)) return true;
  // PGlite after its instance was closed, or after its WASM runtime died.
  if (typeof e.message === 'string' && /^PGlite is closed/.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) {
    return true;
  }
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/** Socket errors, postgres.js's own connection codes, and the SQLSTATEs of a server going away. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

function unavailableCode(code: string): boolean {
  if (NETWORK.has(code)) return true;
  // Class 08: connection exception. 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
  // 53300: too many connections.
  return /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '53300';
}
