import type Koa from 'koa';

/** A body Koa sends as JSON: a plain object or array (no class instance, stream, Blob or Response). */
function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return (
    (Array.isArray(value) || proto === Object.prototype || proto === null) &&
    typeof (value as { pipe?: unknown }).pipe !== 'function'
  );
}

/**
 * Koa 3 tests every body set and every body sent against the global `Response` (and `Blob`,
 * `ReadableStream`), and Node creates that global on first use by loading undici, its fetch implementation:
 * ~760 KB of source compiled in every API process on its first JSON answer, though the API never makes a
 * Response (issue 14, resident memory). Here a plain object or array set as the body takes Koa's own JSON
 * branch directly (status 200 unless set, the JSON type unless one is, no Content-Length yet), and the
 * outermost middleware sends such a body as its JSON text, which Koa writes without those tests: the same
 * status, headers and bytes. Anything else (strings, buffers, streams, class instances) goes through Koa.
 */
export function plainJsonBodies(app: Koa): Koa {
  type Response = Koa.Response & { _body?: unknown; _explicitStatus?: boolean };
  const koaBody = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.response), 'body');
  if (!koaBody?.get || !koaBody.set) return app;
  const { get, set } = koaBody;
  Object.defineProperty(app.response, 'body', {
    configurable: true,
    enumerable: koaBody.enumerable ?? false,
    get,
    set(this: Response, value: unknown) {
      // A stream being replaced goes through Koa, which destroys it.
      if (!isPlainJson(value) || typeof (this._body as { pipe?: unknown } | null)?.pipe === 'function') {
        set.call(this, value);
        return;
      }
      this._body = value;
      if (!this._explicitStatus) this.status = 200;
      this.remove('Content-Length');
      if (!this.type || !/\bjson\b/i.test(this.type)) this.type = 'json';
    },
  });
  // A handler on next()'s promise rather than an async frame per request (issue 14).
  app.middleware.unshift(function jsonText(ctx, next) {
    return next().then(() => {
      if (ctx.respond !== false && isPlainJson(ctx.body)) ctx.body = JSON.stringify(ctx.body);
    });
  });
  return app;
}
