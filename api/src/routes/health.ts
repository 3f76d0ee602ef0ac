import { standbyStoreState } from '@gatehouse/standby/store-check';
import { z } from 'zod';
import { errors } from '../answers.ts';
import { type Route, route } from '../route-table.ts';

/** Liveness (the process answers), readiness (the database answers) and Prometheus metrics. */
export const healthRoutes: Route[] = [
  route({
    method: 'get',
    path: '/healthz',
    doc: () => ({
      summary: 'Liveness',
      responses: {
        '200': {
          description: 'Alive',
          json: z.strictObject({ status: z.literal('ok') }),
        },
      },
    }),
    handler: () =>
      function healthz() {
        return { status: 'ok' };
      },
  }),
  route({
    method: 'get',
    path: '/readyz',
    doc: () => ({
      description:
        'standby_store.warning: a configuration that loses outage tokens after a recovery (STANDBY_STORE_URL unset while standby hosts are published); not a reason to be unready.',
      summary: 'Readiness: the database answers',
      responses: {
        '200': {
          description: 'Ready',
          json: z.strictObject({
            status: z.literal('ready'),
            database: z.enum(['pglite', 'postgres']),
            standby_store: standbyStoreState.optional(),
          }),
        },
        ...errors('database_unavailable'),
      },
    }),
    handler: ({ deps, databaseHealth }) =>
      async function readyz() {
        // Fails with 503 database_unavailable, so the standby takes over; logged once per state change.
        await databaseHealth.ping();
        return {
          status: 'ready',
          database: deps.database.kind,
          ...(deps.standbyStore ? { standby_store: deps.standbyStore } : {}),
        };
      },
  }),
  route({
    method: 'get',
    path: '/metrics',
    doc: () => ({ summary: 'Prometheus metrics', responses: { '200': { description: 'Metrics text' } } }),
    handler: ({ deps }) =>
      async function metrics(ctx) {
        ctx.type = deps.metrics.registry.contentType;
        ctx.body = await deps.metrics.registry.metrics();
      },
  }),
];
