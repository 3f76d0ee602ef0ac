import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { appAuth, appAuthErrors, bodyErrors, errors, ok, serverTokenAnswer } from '../answers.ts';
import { authenticateApp } from '../apps/authenticate.ts';
import { effectivePlan } from '../apps/plans.ts';
import { type Route, route } from '../route-table.ts';
import { issueServerToken, issueServerTokenBody } from '../tokens/server-tokens.ts';

/** POST /v1/server/challenge/issue: form-urlencoded (the spec) or JSON (what public SDKs send). */
export const serverTokenRoutes: Route[] = [
  route({
    method: 'post',
    path: '/v1/server/challenge/issue',
    doc: () => ({
      summary: 'Issue a server token (sct_) for challenge initialization. Server-to-server.',
      security: appAuth,
      responses: {
        '200': {
          description: 'The server token',
          json: ok(serverTokenAnswer),
        },
        ...errors(
          ...bodyErrors,
          ...appAuthErrors,
          'database_unavailable',
          'rate_limit_exceeded',
          'rate_limited',
        ),
      },
    }),
    body: issueServerTokenBody,
    bodyTypes: ['form', 'json'],
    use: ({ deps }) => [authenticateApp(deps.apps)],
    handler: ({ deps }) =>
      async function issue(ctx, { body }) {
        const app = ctx.state.app as App;
        const decision = await deps.issuanceLimiter.take(app.id, effectivePlan(app).issuance);
        if (!decision.allowed) {
          deps.metrics.rateLimited.inc({ limit: 'server_token_issuance' });
          throw new GatehouseError('rate_limit_exceeded', undefined, {
            'Retry-After': String(decision.retryAfterSeconds),
          });
        }
        const answer = success(await issueServerToken(deps.db, deps.keys, app, body));
        deps.metrics.serverTokensIssued.inc();
        return answer;
      },
  }),
];
