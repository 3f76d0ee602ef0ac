import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { readBody } from '@gatehouse/core/http';
import { isIp } from '@gatehouse/core/ip';
import { validateOfflineToken } from '@gatehouse/core/offline-validation';
import { MAX_TOKEN_LENGTH, tokenKind } from '@gatehouse/core/tokens';
import type Router from '@koa/router';
import { z } from 'zod';
import { authenticateApp } from '../apps/authenticate.ts';
import type { Deps } from '../deps.ts';
import { validateDegradedToken } from '../tokens/degraded-tokens.ts';
import { validatePassToken } from '../tokens/pass-tokens.ts';

export const validateBody = z.object({
  pass_token: z.string().min(1).max(MAX_TOKEN_LENGTH),
  client_ip: z
    .string()
    .refine(isIp, 'must be an IPv4 or IPv6 address')
    .meta({ description: 'An IPv4 (dotted decimal) or IPv6 address.' })
    .optional(),
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1 to 128 characters of letters, digits, _ . : or -')
    .optional(),
  keep_token: z.boolean().optional(),
});

/** POST /v1/validate: parse, authenticate, dispatch on the token's prefix, answer. */
export function validateRoutes(router: Router, deps: Deps): void {
  router.post('/v1/validate', authenticateApp(deps.apps), async function validate(ctx) {
    const body = readBody(ctx, validateBody);
    const app = ctx.state.app as App;
    const kind = tokenKind(body.pass_token);
    let data: object;
    if (kind === 'pass') {
      data = await validatePassToken(deps.db, deps.keys, app, body.pass_token, {
        clientIp: body.client_ip,
        idempotencyKey: body.idempotency_key,
        keepToken: body.keep_token,
      });
    } else if (kind === 'degraded') {
      data = validateDegradedToken(deps.keys, app, body.pass_token);
    } else if (kind === 'offline') {
      // Minted by the standby during an outage: honour the consumption its hosts recorded.
      data = await validateOfflineToken(deps.offlineKeys, deps.offlineStore, app, body.pass_token, {
        clientIp: body.client_ip,
        idempotencyKey: body.idempotency_key,
      }).catch((error: unknown) => {
        if (error instanceof GatehouseError) throw error;
        deps.logger.error({ err: error }, 'standby store unreachable: offline token refused');
        throw new GatehouseError('service_unavailable', 'Offline tokens cannot be checked right now.');
      });
    } else {
      throw new GatehouseError('token_not_found');
    }
    deps.metrics.validations.inc({
      kind: kind,
      outcome: 'valid' in data && data.valid ? 'valid' : 'invalid',
    });
    ctx.body = success(data);
  });
}
