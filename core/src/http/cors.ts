import type { Middleware } from 'koa';

/**
 * CORS for the widget's endpoints: called from integrators' pages on any origin with only the public app
 * key and never with credentials, so any origin may call them.
 */
export const openCors: Middleware = function openCors(ctx, next) {
  ctx.set('Access-Control-Allow-Origin', '*');
  // Methods, headers and max-age are read by browsers from the preflight's answer only (Fetch standard,
  // "CORS-preflight fetch"), so a POST's answer does not carry them.
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Content-Type');
    ctx.set('Access-Control-Max-Age', '600');
  }
  return next();
};
