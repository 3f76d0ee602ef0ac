import { GatehouseError } from '@gatehouse/core/errors';
import { clientAddressFrom, errorEnvelope, jsonBodies, requestContext, utf8Only } from '@gatehouse/core/http';
import { siteverifyBoundary } from '@gatehouse/standby/siteverify';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { authThrottling } from './auth-throttle.ts';
import { usageObserver } from './console/observe.ts';
import { DatabaseHealth, databaseErrors } from './database-health.ts';
import type { Deps } from './deps.ts';
import { internalEndpoints } from './internal-endpoints.ts';
import { labelledChildren } from './metrics.ts';
import { mountRoutes } from './route-table.ts';
import { API_ROUTES } from './routes/index.ts';
import { tolerantPaths } from './tolerant-paths.ts';

const routers = new WeakMap<Koa, Router>();

/**
 * The OpenAPI document (`/openapi.json`), imported on the first request, not at start-up: every endpoint's
 * zod schemas turned into JSON Schema would sit in every replica's resident memory from the start, for a
 * document few of them serve. Supplied to the routes rather than imported by them, since the document is
 * built from the route table they belong to.
 */
async function openapiDocument(): Promise<object> {
  return (await import('./openapi.ts')).openapiDocument;
}

/** The router of an app `createApp` built (its routes, for tests that go over every one). */
export function routerOf(app: Koa): Router | undefined {
  return routers.get(app);
}

/** Builds the main API as a Koa app. It never listens: `server.ts` does, tests call it in-process. */
export function createApp(deps: Deps): Koa {
  // Koa's own proxy support takes the leftmost X-Forwarded-For entry, which the client writes: the client
  // address comes from the proxies the deployment declares instead (clientAddressFrom, first below).
  const app = new Koa({ proxy: false });
  const router = new Router();
  const hot = new Router();
  const databaseHealth = new DatabaseHealth(deps.database, deps.logger);
  const services = { deps, databaseHealth, openapiDocument };
  mountRoutes(router, API_ROUTES, services);
  // The routes most requests take, tried first on a router of their own (matching every request against
  // the whole table is a fifth of an init's CPU); a request they do not take (another method included)
  // goes on to the whole table, whose answers (405 with Allow) stay the router's.
  mountRoutes(
    hot,
    API_ROUTES.filter((r) => r.hot),
    services,
  );

  // First: every middleware that decides by path (the internal-endpoints guard, the authentication
  // throttle, the usage observer) must see the path the router will route, or `//metrics` and
  // `//admin/...` walk past them to the routes themselves.
  app.use(clientAddressFrom(deps.config.clientAddress));
  app.use(tolerantPaths());
  // The route histogram is observed where the request line is written: above the error envelope, so a
  // request that ended in a thrown error is counted under the status it was answered with.
  app.use(requestContext(deps.logger, routeMetrics(deps)));
  app.use(errorEnvelope(deps.logger));
  // The siteverify paths answer a refused request (413, 415, 400, 429) in the vendor's shape.
  app.use(siteverifyBoundary());
  app.use(internalEndpoints(deps.config.internal));
  // Admin answers hold secrets (a new app secret, a rotated key, a sync credential, a session) or what they
  // guard: no browser or proxy cache may keep them. Error answers included, so the rule has no exception.
  app.use(function adminAnswersNotStored(ctx, next) {
    if (ctx.path.startsWith('/admin/')) ctx.set('Cache-Control', 'no-store');
    return next();
  });
  app.use(databaseErrors(databaseHealth));
  app.use(authThrottling(deps.authThrottle));
  app.use(function notFound(ctx, next) {
    return next().then(() => {
      if (ctx.status === 404 && ctx.body == null) throw new GatehouseError('not_found');
      // The router answered 405 (or 501 for a method it does not know) with an Allow header and no body.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
        throw new GatehouseError('method_not_allowed', undefined, { Allow: ctx.response.get('Allow') });
      }
    });
  });
  app.use(utf8Only());
  // What the widget and the SDKs send is read here (a direct reader: its cost on init and validate is what
  // keeps it); anything else by the general parser below it.
  app.use(jsonBodies(deps.config.bodyLimitBytes));
  const generalBodies = bodyParser({
    enableTypes: ['json', 'form'],
    jsonLimit: deps.config.bodyLimitBytes,
    formLimit: deps.config.bodyLimitBytes,
    jsonStrict: true,
    // A body that cannot be read or decoded (a corrupt gzip or brotli stream included) is the client's
    // fault: keep the parser's 4xx, and never let a decoder's error become a 500.
    onError(error) {
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) throw error;
      throw new GatehouseError('invalid_request', 'The request body could not be decoded.');
    },
  });
  // A body jsonBodies read is left alone by the general parser (it skips a request whose body is set):
  // such a request goes past it without entering it.
  app.use(function otherBodies(ctx, next) {
    return (ctx.request as { body?: unknown }).body === undefined ? generalBodies(ctx, next) : next();
  });
  app.use(usageObserver(deps.usage));
  app.use(hot.routes());
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.silent = true;
  routers.set(app, router);
  return app;
}

function routeMetrics(deps: Deps): (ctx: Koa.Context, ms: number) => void {
  const durations = labelledChildren((v) => deps.metrics.httpDuration.labels(v));
  return function routeMetrics(ctx, ms) {
    // The matched route's pattern (@koa/router's `routerPath`), never the raw path: unknown paths must not
    // create label values.
    const matched = (ctx as { routerPath?: unknown }).routerPath;
    const route = typeof matched === 'string' ? matched : 'unmatched';
    durations({ method: ctx.method, route, status: String(ctx.status) }).observe(ms / 1000);
  };
}
