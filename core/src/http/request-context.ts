import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Health probes and metric scrapes arrive every second or so from load balancers, Kubernetes and the
 * standby: logged at debug, so that at info the log holds what people did, not what machines polled.
 */
const PROBES = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

/**
 * Gives every request an id (kept from X-Request-Id when sane), echoes it, and logs one line per request.
 * `done`, when given, is told of every request once it is answered (its status set) with its duration in
 * milliseconds: the API's route histogram, which had a middleware (an async frame and a clock read) of its own.
 */
export function requestContext(
  logger: Logger,
  done?: (ctx: Parameters<Middleware>[0], ms: number) => void,
): Middleware {
  // The request line holds only fields built here (an id, the method, the path without its query, the
  // status, a duration, an error code), never a header or a body, so the logger's redaction has nothing
  // to find in it; skipping it was ~2% of a validation's CPU (issue 14). Every other line keeps it.
  const lines = logger.child({}, { redact: [] });
  return async function requestContext(ctx, next) {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // Headers are deliberately not logged: X-App-Secret and Authorization must never reach the logs.
      const ms = performance.now() - started;
      done?.(ctx, ms);
      const path = ctx.path;
      const status = ctx.status;
      const level = status < 500 && PROBES.has(path) ? 'debug' : 'info';
      if (lines.isLevelEnabled(level)) {
        const body = ctx.body as { error?: unknown } | null | undefined;
        const line: Record<string, unknown> = {
          reqId: requestId,
          method: ctx.method,
          path,
          status,
          ms: Math.round(ms * 100) / 100,
        };
        // Only the envelope's error code: a string, so nothing a redaction path could name rides along.
        if (typeof body === 'object' && body !== null && typeof body.error === 'string')
          line.error = body.error;
        lines[level](line, 'request');
      }
    }
  };
}
