import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { ipAddressSchema } from '@gatehouse/core/ip';
import { validateOfflineToken } from '@gatehouse/core/offline-validation';
import { MAX_TOKEN_LENGTH, tokenKind } from '@gatehouse/core/tokens';
import { z } from 'zod';
import { appAuth, appAuthErrors, bodyErrors, errors, tokenVerdict } from '../answers.ts';
import { authenticateApp } from '../apps/authenticate.ts';
import type { Deps } from '../deps.ts';
import { labelledChildren } from '../metrics.ts';
import { type Route, route } from '../route-table.ts';
import { validateDegradedToken } from '../tokens/degraded-tokens.ts';
import { validatePassToken } from '../tokens/pass-tokens.ts';
import { actionSchema } from '../tokens/server-tokens.ts';

export const validateBody = z
  .object({
    pass_token: z.string().min(1).max(MAX_TOKEN_LENGTH),
    client_ip: ipAddressSchema.optional(),
    idempotency_key: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1 to 128 characters of letters, digits, _ . : or -')
      .optional(),
    keep_token: z.boolean().optional(),
    action: actionSchema.optional().meta({
      description:
        'The action the caller expects. A token solved for another action is the token_action_mismatch verdict.',
    }),
  })
  // A field the server does not know is refused: silently ignoring one (an expected `action`, say) would
  // let the caller believe it was checked.
  .strict();

export interface TokenCheck {
  clientIp?: string | undefined;
  idempotencyKey?: string | undefined;
  keepToken?: boolean | undefined;
  /** The action the caller expects; absent: any action, echoed for the caller to compare. */
  action?: string | undefined;
  retryForLifetime?: boolean | undefined;
  withCdata?: boolean | undefined;
}

/**
 * Validates any token kind for an app and returns the verdict's data, or throws the verdict's error
 * (`token_*`, `client_ip_mismatch`). `/v1/validate` and the siteverify-compatible endpoints share it.
 */
export async function checkToken(deps: Deps, app: App, token: string, check: TokenCheck): Promise<object> {
  const kind = tokenKind(token);
  let data: { valid: boolean; action?: string };
  if (kind === 'pass') {
    data = await validatePassToken(deps.db, deps.keys, app, token, check);
  } else if (kind === 'degraded') {
    data = validateDegradedToken(deps.keys, app, token);
    const act = deps.keys.openDegraded(app.id, token)?.act;
    if (check.action !== undefined && act !== check.action) throw actionMismatch(act);
  } else if (kind === 'offline') {
    // Minted by the standby during an outage: honour the consumption its hosts recorded.
    data = await validateOfflineToken(deps.offline, app, token, {
      clientIp: check.clientIp,
      idempotencyKey: check.idempotencyKey,
    }).catch((error: unknown) => {
      if (error instanceof GatehouseError) throw error;
      deps.logger.error({ err: error }, 'standby store unreachable: offline token refused');
      throw new GatehouseError('service_unavailable', 'Offline tokens cannot be checked right now.');
    });
  } else {
    throw new GatehouseError('token_not_found');
  }
  // Checked after consumption: a token presented at the wrong flow is spent, as a replay would be.
  if (check.action !== undefined && kind !== 'degraded' && data.action !== check.action) {
    throw actionMismatch(data.action);
  }
  return data;
}

/**
 * Adds `risk: {score, reasons}` to a verdict that carries captcha_args: what the risk engine made of the
 * request the token's challenge came from, so the integrator sees why, not only the server log.
 */
function withRisk(data: object): object {
  const args = (data as { captcha_args?: { risk_score?: number; risk_reasons?: string[] } }).captcha_args;
  if (typeof args?.risk_score !== 'number') return data;
  return { ...data, risk: { score: args.risk_score, reasons: args.risk_reasons ?? [] } };
}

function actionMismatch(action: string | undefined): GatehouseError {
  return new GatehouseError('token_action_mismatch', undefined, {}, { action: action ?? null });
}

/** POST /v1/validate: authenticate, parse, check the token, answer. */
export const validateRoutes: Route[] = [
  route({
    method: 'post',
    path: '/v1/validate',
    hot: true,
    doc: () => ({
      summary: 'Validate a pass token (pt_) or a degraded token (dg_). Server-to-server.',
      security: appAuth,
      responses: {
        '200': {
          description:
            'A verdict: valid, degraded, or a negative verdict on the token (the error envelope with data.valid false; token_action_mismatch when `action` was sent and differs).',
          json: tokenVerdict,
        },
        ...errors(
          ...bodyErrors,
          ...appAuthErrors,
          'service_unavailable',
          'database_unavailable',
          'rate_limited',
        ),
      },
    }),
    body: validateBody,
    use: ({ deps }) => [authenticateApp(deps.apps)],
    handler({ deps }) {
      const validations = labelledChildren((v) => deps.metrics.validations.labels(v));
      // The counter per token kind (a handful: tokenKind's or 'unknown') and outcome, found without a labels
      // object and a key string per validation.
      const counters = new Map<string, { valid?: { inc(): void }; invalid?: { inc(): void } }>();
      const count = (kind: string, outcome: 'valid' | 'invalid') => {
        let byOutcome = counters.get(kind);
        if (!byOutcome) {
          byOutcome = {};
          counters.set(kind, byOutcome);
        }
        byOutcome[outcome] ??= validations({ kind, outcome });
        byOutcome[outcome].inc();
      };
      return async function validate(ctx, { body }) {
        const app = ctx.state.app as App;
        const kind = tokenKind(body.pass_token) ?? 'unknown';
        try {
          const data = await checkToken(deps, app, body.pass_token, {
            clientIp: body.client_ip,
            idempotencyKey: body.idempotency_key,
            keepToken: body.keep_token,
            action: body.action,
          });
          count(kind, 'valid' in data && data.valid ? 'valid' : 'invalid');
          return success(withRisk(data));
        } catch (error) {
          if (error instanceof GatehouseError && error.status === 200) {
            count(kind, 'invalid');
          }
          throw error;
        }
      };
    },
  }),
];
