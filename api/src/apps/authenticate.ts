import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import type { Middleware } from 'koa';
import type { AppRepository } from './repository.ts';
import { verifyAppSecret } from './secrets.ts';

/**
 * Server-to-server authentication: 1. X-App-Key names a known app, 2. X-App-Secret matches its current
 * secret (or the previous one during a rotation's grace), compared in constant time, 3. the app is enabled.
 * Puts the app on `ctx.state.app`.
 */
export function authenticateApp(apps: AppRepository): Middleware<{ app: App }> {
  return async function authenticateApp(ctx, next) {
    const appKey = ctx.get('X-App-Key');
    const secret = ctx.get('X-App-Secret');
    if (!appKey || appKey.length > 128) throw new GatehouseError('invalid_app_key');
    const app = await apps.findByKey(appKey);
    if (!app) throw new GatehouseError('invalid_app_key');
    if (!secret || !verifyAppSecret(app, secret)) throw new GatehouseError('invalid_app_secret');
    if (app.disabledAt) throw new GatehouseError('app_disabled');
    ctx.state.app = app;
    await next();
  };
}
