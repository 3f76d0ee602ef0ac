import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Health probes and metric scrapes arrive every second or so from load balancers, Kubernetes and the
 * standby: logged at debug, so that at info the log holds what people did, not what machines polled.
 */
const PROBES = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

/** Gives every request an id (kept from X-Request-Id when sane), echoes it, and logs one line per request. */
export function requestContext(logger: Logger): Middleware {
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
      const level = PROBES.has(ctx.path) && ctx.status < 500 ? 'debug' : 'info';
      logger[level](
        {
          reqId: requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 100) / 100,
          ...(typeof ctx.body === 'object' && ctx.body && 'error' in ctx.body
            ? { error: ctx.body.error }
            : {}),
        },
        'request',
      );
    }
  };
}
