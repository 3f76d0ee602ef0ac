import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import type { Middleware, Next } from 'koa';
import type { AppRepository } from './repository.ts';
import { verifyAppSecret } from './secrets.ts';

/**
 * Server-to-server authentication: 1. X-App-Key names a known app, 2. X-App-Secret matches its current
 * secret (or the previous one during a rotation's grace), compared in constant time, 3. the app is enabled.
 * Puts the app on `ctx.state.app`.
 */
export function authenticateApp(apps: AppRepository): Middleware<{ app: App }> {
  const admit = (
    ctx: Parameters<Middleware<{ app: App }>>[0],
    next: Next,
    app: App | null,
    secret: string,
  ) => {
    if (!app) throw new GatehouseError('invalid_app_key');
    if (!secret || !verifyAppSecret(app, secret)) throw new GatehouseError('invalid_app_secret');
    if (app.disabledAt) throw new GatehouseError('app_disabled');
    ctx.state.app = app;
    return next();
  };
  // Not async: an app the repository has cached is admitted at once (no promise, no frame), and
  // a throw is a rejection to whoever runs it (koa-compose, in either router).
  return function authenticateApp(ctx, next) {
    const appKey = ctx.get('X-App-Key');
    const secret = ctx.get('X-App-Secret');
    if (!appKey || appKey.length > 128) throw new GatehouseError('invalid_app_key');
    const cached = apps.cachedByKey(appKey);
    if (cached !== undefined) return admit(ctx, next, cached, secret);
    return apps.findByKey(appKey).then((app) => admit(ctx, next, app, secret));
  };
}
