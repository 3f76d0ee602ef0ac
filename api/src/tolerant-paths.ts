import type { Middleware } from 'koa';

/**
 * Collapses repeated slashes in the path (`//v1/validate` is `/v1/validate`): integrations join a
 * configured base URL and a path, and a base URL written with a trailing slash must not turn every call
 * into a 404. A trailing slash on the path itself is already tolerated by the router (non-strict).
 */
export function tolerantPaths(): Middleware {
  // next()'s promise handed back, not awaited: an async frame per request for nothing after it.
  return function tolerantPaths(ctx, next) {
    if (ctx.path.includes('//')) ctx.path = ctx.path.replace(/\/{2,}/g, '/');
    return next();
  };
}
