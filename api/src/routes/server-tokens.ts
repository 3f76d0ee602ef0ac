import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { readBody } from '@gatehouse/core/http';
import type Router from '@koa/router';
import { authenticateApp } from '../apps/authenticate.ts';
import { effectivePlan } from '../apps/plans.ts';
import type { Deps } from '../deps.ts';
import { issueServerToken, issueServerTokenBody } from '../tokens/server-tokens.ts';

/** POST /v1/server/challenge/issue: form-urlencoded (the spec) or JSON (what public SDKs send). */
export function serverTokenRoutes(router: Router, deps: Deps): void {
  router.post('/v1/server/challenge/issue', authenticateApp(deps.apps), async function issue(ctx) {
    const body = readBody(ctx, issueServerTokenBody, ['form', 'json']);
    const app = ctx.state.app as App;
    const decision = await deps.issuanceLimiter.take(app.id, effectivePlan(app).issuance);
    if (!decision.allowed) {
      deps.metrics.rateLimited.inc({ limit: 'server_token_issuance' });
      throw new GatehouseError('rate_limit_exceeded', undefined, {
        'Retry-After': String(decision.retryAfterSeconds),
      });
    }
    ctx.body = success(await issueServerToken(deps.db, deps.keys, app, body));
    deps.metrics.serverTokensIssued.inc();
  });
}
