import { GatehouseError } from '@gatehouse/core/errors';
import type Router from '@koa/router';
import type { Deps } from '../deps.ts';

/** Liveness (the process answers), readiness (the database answers) and Prometheus metrics. */
export function healthRoutes(router: Router, deps: Deps): void {
  router.get('/healthz', function healthz(ctx) {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async function readyz(ctx) {
    try {
      await deps.database.ping();
    } catch (error) {
      deps.logger.warn({ err: error }, 'readiness: database unreachable');
      throw new GatehouseError('service_unavailable', 'The database is unreachable.');
    }
    ctx.body = { status: 'ready', database: deps.database.kind };
  });
  router.get('/metrics', async function metrics(ctx) {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
}
