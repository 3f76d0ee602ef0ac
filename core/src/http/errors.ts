import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { GatehouseError } from '../errors.ts';
import { sendJson } from './answer.ts';

/**
 * First in the chain: turns anything thrown below into the spec's envelope. Expected 4xx are answered
 * without an error log; anything else is logged once, here, and its message never reaches the client.
 */
export function errorEnvelope(logger: Logger): Middleware {
  // A rejection handler on next()'s promise rather than an async frame: this runs on every request.
  return function errorEnvelope(ctx, next) {
    return next().catch((thrown: unknown) => {
      const error = asGatehouseError(thrown);
      // A GatehouseError is an answer chosen on purpose (a 503 included): whoever threw it logs it, once.
      if (error.status >= 500 && !(thrown instanceof GatehouseError)) {
        logger.error({ err: thrown, reqId: ctx.state.requestId, path: ctx.path }, 'unhandled error');
      }
      ctx.status = error.status;
      ctx.set(error.headers);
      sendJson(ctx, error.toEnvelope());
    });
  };
}

/** Maps errors thrown by Koa's own middleware (body parser, http-errors) onto our codes. */
function asGatehouseError(thrown: unknown): GatehouseError {
  if (thrown instanceof GatehouseError) return thrown;
  const e = thrown as { status?: number; statusCode?: number; type?: string; expose?: boolean };
  const status = e?.status ?? e?.statusCode;
  if (status === 413 || e?.type === 'entity.too.large') return new GatehouseError('payload_too_large');
  if (status === 415) return new GatehouseError('unsupported_media_type');
  if (status === 400 || e?.type === 'entity.parse.failed') {
    return new GatehouseError('invalid_request', 'The request body could not be parsed.');
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new GatehouseError('invalid_request', 'The request could not be processed.');
  }
  return new GatehouseError('internal_error');
}
