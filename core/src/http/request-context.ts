import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import pino, { type Logger } from 'pino';
import { answerOf } from './answer.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Health probes and metric scrapes arrive every second or so from load balancers, Kubernetes and the
 * standby: logged at debug, so that at info the log holds what people did, not what machines polled.
 */
const PROBES = new Set(['/healthz', '/readyz', '/livez', '/metrics']);
/**
 * Reads between services are machines polling too: the standby's snapshot (`/internal/...`) and its copy
 * of the public widget files, which it asks for with this user agent (standby/src/widget-mirror.ts).
 */
const INTERNAL_READS = '/internal/';
export const SYNC_USER_AGENT = 'gatehouse-standby';

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
  // to find in it, and this line, written per request, skips it. Every other line keeps it.
  const lines = logger.child({}, { redact: [] });
  const write = requestLineWriter(lines);
  const finish = (ctx: Parameters<Middleware>[0], requestId: string, started: number) => {
    // Headers are deliberately not logged: X-App-Secret and Authorization must never reach the logs.
    const ms = performance.now() - started;
    done?.(ctx, ms);
    const path = ctx.path;
    const status = ctx.status;
    const polled =
      PROBES.has(path) ||
      (ctx.method === 'GET' &&
        (path.startsWith(INTERNAL_READS) ||
          (path.startsWith('/widget/') && ctx.get('User-Agent').startsWith(SYNC_USER_AGENT))));
    const level = status < 500 && polled ? 'debug' : 'info';
    if (lines.isLevelEnabled(level)) {
      const body = answerOf(ctx) as { error?: unknown } | null | undefined;
      // Only the envelope's error code: a string, so nothing a redaction path could name rides along.
      const error =
        typeof body === 'object' && body !== null && typeof body.error === 'string' ? body.error : undefined;
      write(level, requestId, ctx.method, path, status, Math.round(ms * 100) / 100, error);
    }
  };
  // Handlers on next()'s promise rather than an async frame per request; the line is written
  // whether the layers below resolved or rejected, as a `finally` would.
  return function requestContext(ctx, next) {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    return next().then(
      () => finish(ctx, requestId, started),
      (error: unknown) => {
        finish(ctx, requestId, started);
        throw error;
      },
    );
  };
}

type LineWriter = (
  level: 'debug' | 'info',
  reqId: string,
  method: string,
  path: string,
  status: number,
  ms: number,
  error: string | undefined,
) => void;

const S = pino.symbols;
const FIELDS = ['reqId', 'method', 'path', 'status', 'ms', 'error', 'msg'];

/**
 * Writes the request line. For a plain pino logger it builds the line itself, byte for byte what pino
 * writes for `{ reqId, method, path, status, ms, error }` and the message `request` (its level prefix,
 * time, bindings and end taken from the logger): pino's general serializer (a loop over the object's keys
 * with per-key lookups and escaping checks) is a real share of a cheap request's CPU. A logger with
 * anything that changes a line (mixin, log formatter, hooks, serializers or stringifiers for these keys,
 * another message key, a nested key or prefix, a stream that wants metadata) takes pino's own path.
 */
function requestLineWriter(logger: Logger): LineWriter {
  const general: LineWriter = (level, reqId, method, path, status, ms, error) =>
    logger[level](
      error === undefined ? { reqId, method, path, status, ms } : { reqId, method, path, status, ms, error },
      'request',
    );
  const l = logger as unknown as Record<symbol, unknown>;
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined;
  const hooks = l[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const serializers = (l[S.serializersSym] ?? {}) as Record<string | symbol, unknown>;
  const stringifiers = (l[S.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const stream = l[S.streamSym] as { write?: (line: string) => unknown } & Record<symbol, unknown>;
  const plain =
    l[S.mixinSym] == null &&
    formatters?.log == null &&
    hooks?.logMethod == null &&
    hooks?.streamWrite == null &&
    l[S.messageKeySym] === 'msg' &&
    l[S.nestedKeySym] == null &&
    l[(S as unknown as Record<string, symbol>).msgPrefixSym!] == null &&
    stringifiers[S.wildcardFirstSym] == null &&
    FIELDS.every((key) => serializers[key] == null && stringifiers[key] == null) &&
    typeof l[S.timeSym] === 'function' &&
    typeof l[S.lsCacheSym] === 'object' &&
    typeof l[S.chindingsSym] === 'string' &&
    typeof l[S.endSym] === 'string' &&
    typeof stream?.write === 'function' &&
    stream[S.needsMetadataGsym] !== true;
  if (!plain) return general;
  const levels = logger.levels.values;
  const cache = l[S.lsCacheSym] as Record<number, string>;
  const time = l[S.timeSym] as () => string;
  const end = l[S.endSym] as string;
  return function writeLine(level, reqId, method, path, status, ms, error) {
    // Bindings are read per line: a child's are fixed, but `setBindings` may change them.
    let line = `${cache[levels[level]!]}${time()}${l[S.chindingsSym] as string},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${Number.isFinite(status) ? status : null},"ms":${Number.isFinite(ms) ? ms : null}`;
    if (error !== undefined) line += `,"error":${JSON.stringify(error)}`;
    stream.write!(`${line},"msg":"request"${end}`);
  };
}
