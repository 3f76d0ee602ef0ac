import { constantTimeEqual } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import { isInternalRequest } from '@gatehouse/core/http';
import type Koa from 'koa';
import { z } from 'zod';

/**
 * Internal endpoints (`/metrics`, `/internal/...`: the standby's snapshot, with the offline signing key
 * and secret hashes) on a port of their own. With INTERNAL_PORT set, the public listener (PORT, what an
 * Ingress routes) answers 404 for them, exactly as for a path that does not exist, and only the internal
 * listener serves them; NetworkPolicies then admit only the standby and the operator to that port.
 * METRICS_TOKEN, when set, is the bearer token `/metrics` asks for (a Prometheus scrape credential).
 * Unset INTERNAL_PORT (a single machine, `npm start`): everything on PORT, as before.
 */
export interface InternalEndpointsConfig {
  port: number | undefined;
  metricsToken: string | undefined;
}

const schema = z.object({
  INTERNAL_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_TOKEN: z.string().min(16).optional(),
});

export function loadInternalEndpoints(env: NodeJS.ProcessEnv): InternalEndpointsConfig {
  const parsed = schema.safeParse({
    INTERNAL_PORT: env.INTERNAL_PORT || undefined,
    METRICS_TOKEN: env.METRICS_TOKEN || undefined,
  });
  if (!parsed.success)
    throw new Error(
      `Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return { port: parsed.data.INTERNAL_PORT, metricsToken: parsed.data.METRICS_TOKEN };
}

export const isInternalPath = (path: string) => path === '/metrics' || path.startsWith('/internal/');

/** Koa middleware: internal paths only through the internal listener (when there is one), metrics behind their token. */
export function internalEndpoints(config: InternalEndpointsConfig): Koa.Middleware {
  // Not async: koa-compose turns a throw into a rejection, and every other request just gets next()'s promise.
  return function internalEndpoints(ctx, next) {
    if (!isInternalPath(ctx.path)) return next();
    if (config.port !== undefined && !isInternalRequest(ctx.req)) throw new GatehouseError('not_found');
    if (ctx.path === '/metrics' && config.metricsToken) {
      const header = ctx.get('Authorization');
      const presented = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!presented || !constantTimeEqual(presented, config.metricsToken))
        throw new GatehouseError('unauthorized', 'Missing or invalid metrics token.');
    }
    return next();
  };
}
