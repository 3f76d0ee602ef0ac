import { GatehouseError } from '@gatehouse/core/errors';
import { clientAddressFrom, errorEnvelope, jsonBodies, requestContext, utf8Only } from '@gatehouse/core/http';
import { siteverifyBoundary } from '@gatehouse/standby/siteverify';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { authThrottling } from './auth-throttle.ts';
import { consoleAdminRoutes } from './console/admin-routes.ts';
import { usageObserver } from './console/observe.ts';
import { consoleRoutes } from './console/routes.ts';
import { DatabaseHealth, databaseErrors } from './database-health.ts';
import type { Deps } from './deps.ts';
import { internalEndpoints } from './internal-endpoints.ts';
import { plainJsonBodies } from './json-bodies.ts';
import { labelledChildren } from './metrics.ts';
import { adminRoutes } from './routes/admin.ts';
import { challengeRoutes } from './routes/challenge.ts';
import { docsRoutes } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { openapiRoutes } from './routes/openapi.ts';
import { rootRoutes } from './routes/root.ts';
import { serverTokenRoutes } from './routes/server-tokens.ts';
import { siteverifyRoutes } from './routes/siteverify.ts';
import { standbyRoutes } from './routes/standby.ts';
import { standbyKeyRoutes } from './routes/standby-keys.ts';
import { validateRoutes } from './routes/validate.ts';
import { widgetRoutes } from './routes/widget.ts';
import { tolerantPaths } from './tolerant-paths.ts';

const routers = new WeakMap<Koa, Router>();

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
  const databaseHealth = new DatabaseHealth(deps.database, deps.logger);

  healthRoutes(router, deps, databaseHealth);
  openapiRoutes(router);
  rootRoutes(router);
  docsRoutes(router);
  consoleRoutes(router);
  consoleAdminRoutes(router, deps);
  challengeRoutes(router, deps);
  validateRoutes(router, deps);
  siteverifyRoutes(router, deps);
  standbyRoutes(router, deps);
  serverTokenRoutes(router, deps);
  adminRoutes(router, deps);
  standbyKeyRoutes(router, deps);
  widgetRoutes(router, deps);

  // First: every middleware that decides by path (the internal-endpoints guard, the authentication
  // throttle, the usage observer) must see the path the router will route, or `//metrics` and
  // `//admin/...` walk past them to the routes themselves.
  app.use(clientAddressFrom(deps.config.clientAddress));
  app.use(tolerantPaths());
  // The route histogram is observed where the request line is written: above the error envelope, so a
  // request that ended in a thrown error is counted under the status it was answered with (below it, every
  // one was counted as 404, the status before the envelope set it).
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
    // A handler on next()'s promise rather than an async frame per request (issue 14).
    return next().then(() => {
      if (ctx.status === 404 && ctx.body == null) throw new GatehouseError('not_found');
      // The router answered 405 (or 501 for a method it does not know) with an Allow header and no body.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
        throw new GatehouseError('method_not_allowed', undefined, { Allow: ctx.response.get('Allow') });
      }
    });
  });
  app.use(utf8Only());
  // What the widget and the SDKs send is read here; anything else by the general parser below it.
  app.use(jsonBodies(deps.config.bodyLimitBytes));
  app.use(
    bodyParser({
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
    }),
  );
  app.use(usageObserver(deps.usage));
  app.use(exactRoutes(router, EXACT_ROUTES));
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.silent = true;
  routers.set(app, router);
  // Plain JSON bodies sent without Koa's Response/Blob tests, which load undici (json-bodies.ts): every
  // app built here, whoever listens (server.ts, the bench's API child, tests).
  return plainJsonBodies(app);
}

/**
 * The routes whose requests are most of the load, run without the router's per-request work (issue 14:
 * matching the path against all ~40 routes, building and composing the matched layers' chain, their
 * captures and params, ~3 % of an invisible init): the API's first request of every visitor (the init)
 * and the integrator's call (validate). One look-up by path and method; the context gets what the router
 * would set (matched layers, route name, empty params and captures) and the route's own middleware.
 * Checked when built: each is exactly one layer, with no parameters and no router-level middleware beside
 * it, or createApp throws (a route added or changed there must be looked at here).
 */
export const EXACT_ROUTES: readonly (readonly [method: string, path: string])[] = [
  ['POST', '/v1/challenge/init'],
  ['POST', '/v1/validate'],
];

export function exactRoutes(router: Router, routes: typeof EXACT_ROUTES): Koa.Middleware {
  type Lane = { method: string; run: (ctx: Koa.Context, next: Koa.Next) => Promise<unknown> };
  const lanes = new Map<string, Lane>();
  for (const [method, path] of routes) {
    if (lanes.has(path)) throw new Error(`${path}: one exact route per path`);
    lanes.set(path, { method, run: exactLane(router, method, path) });
  }
  return function exactRoutes(ctx, next) {
    const lane = lanes.get(ctx.path);
    if (lane === undefined || ctx.method !== lane.method) return next();
    return lane.run(ctx, next);
  };
}

function exactLane(
  router: Router,
  method: string,
  path: string,
): (ctx: Koa.Context, next: Koa.Next) => Promise<unknown> {
  const matched = router.match(path, method);
  const layers = matched.pathAndMethod;
  const layer = layers[0];
  // pathAndMethod holds router-level middleware (no methods) too: exactly the route's layer, or no lane.
  if (layers.length !== 1 || !layer || layer.methods.length === 0 || layer.paramNames.length > 0) {
    throw new Error(`${method} ${path} is not a single route without parameters: no exact lane for it`);
  }
  const stack = layer.stack as unknown as Koa.Middleware[];
  const run = (ctx: Koa.Context, next: Koa.Next, i: number): Promise<unknown> => {
    const fn = stack[i];
    if (!fn) return next();
    try {
      return Promise.resolve(fn(ctx, () => run(ctx, next, i + 1)));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return (ctx, next) => {
    const routed = ctx as Koa.Context & Record<string, unknown>;
    routed.router = router;
    routed.routeMatched = true;
    routed.matched = [layer];
    routed._matchedRoute = layer.path;
    if (layer.name) routed._matchedRouteName = layer.name;
    routed.captures = [];
    const params = {};
    (ctx.request as unknown as Record<string, unknown>).params = params;
    routed.params = params;
    routed.routerPath = layer.path;
    routed.routerName = layer.name || undefined;
    return run(ctx, next, 0);
  };
}

function routeMetrics(deps: Deps): (ctx: Koa.Context, ms: number) => void {
  const durations = labelledChildren((v) => deps.metrics.httpDuration.labels(v));
  // The child per method, route and status, found without building a labels object and a key string per
  // request (issue 14); `durations` bounds the label sets, and this cache is cleared with it past 1,000.
  const children = new Map<string, Map<string, Map<number, { observe(seconds: number): void }>>>();
  let size = 0;
  return function routeMetrics(ctx, ms) {
    // The matched route pattern (@koa/router's `_matchedRoute`), never the raw path: unknown paths must
    // not create label values. (`routePath`, read before, is set by no router: every request was unmatched.)
    const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    const route = typeof matched === 'string' ? matched : 'unmatched';
    const method = ctx.method;
    const status = ctx.status;
    let byRoute = children.get(method);
    if (!byRoute) {
      byRoute = new Map();
      children.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (!byStatus) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let child = byStatus.get(status);
    if (!child) {
      if (size >= 1000) {
        children.clear();
        size = 0;
      }
      child = durations({ method, route, status: String(status) });
      byStatus.set(status, child);
      size++;
    }
    child.observe(ms / 1000);
  };
}
