import { once } from 'node:events';
import type { RequestListener, Server } from 'node:http';
import { z } from 'zod';

/*
 * node:http as Node's CommonJS module, not an ES import: the ES namespace reads every export, WebSocket's
 * lazy getter included, which loads undici (Node's fetch, megabytes resident) in a process that never uses it
 * (the API's bundle also takes node:http as CommonJS, api/scripts/build-server.ts).
 */
const { createServer } = process.getBuiltinModule('node:http');

/**
 * Our own limits on every public listener (main API and standby), instead of Node's defaults, which let a
 * client trickling a header hold a connection for a minute or more. Defaults suit
 * a public endpoint whose requests are a few kilobytes; docs/security.md lists them.
 */
export interface HttpLimits {
  /** Whole header block received within this, or 408 and the connection closed. */
  headersTimeoutMs: number;
  /** Whole request (headers and body) received within this, or 408 and the connection closed. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. Behind a proxy, keep it above the proxy's idle timeout. */
  keepAliveTimeoutMs: number;
  /** Open connections per process; beyond it new ones are closed at once. */
  maxConnections: number;
}

export const HTTP_LIMIT_DEFAULTS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 4096,
};

const ms = (fallback: number) => z.coerce.number().int().min(100).max(600_000).default(fallback);

/** The environment keys of `HttpLimits`, for each service's config schema. */
export const httpLimitsEnv = z.object({
  HTTP_HEADERS_TIMEOUT_MS: ms(HTTP_LIMIT_DEFAULTS.headersTimeoutMs),
  HTTP_REQUEST_TIMEOUT_MS: ms(HTTP_LIMIT_DEFAULTS.requestTimeoutMs),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: ms(HTTP_LIMIT_DEFAULTS.keepAliveTimeoutMs),
  HTTP_MAX_CONNECTIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(HTTP_LIMIT_DEFAULTS.maxConnections),
});

/** Reads the limits from the environment; throws one precise sentence for a bad value or combination. */
export function loadHttpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const result = httpLimitsEnv.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.data;
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new Error('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS.');
  }
  return {
    headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: e.HTTP_MAX_CONNECTIONS,
  };
}

/**
 * Listens with the limits applied. Node checks header and request deadlines only every
 * `connectionsCheckingInterval` (30 s by default, which more than doubles a 10 s deadline), so the check
 * runs at a tenth of the shortest deadline, at least every second.
 */
export async function listenHttp(
  handler: RequestListener,
  port: number,
  host: string,
  limits: HttpLimits,
): Promise<Server> {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)),
      ),
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
