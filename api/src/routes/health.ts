import type Router from '@koa/router';
import type { DatabaseHealth } from '../database-health.ts';
import type { Deps } from '../deps.ts';

/** Liveness (the process answers), readiness (the database answers) and Prometheus metrics. */
export function healthRoutes(router: Router, deps: Deps, database: DatabaseHealth): void {
  router.get('/healthz', function healthz(ctx) {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async function readyz(ctx) {
    // Fails with 503 database_unavailable, so the standby takes over; logged once per state change.
    await database.ping();
    ctx.body = {
      status: 'ready',
      database: deps.database.kind,
      ...(deps.standbyStore ? { standby_store: deps.standbyStore } : {}),
    };
  });
  router.get('/metrics', async function metrics(ctx) {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
}
