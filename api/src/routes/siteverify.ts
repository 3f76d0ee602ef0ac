import { isDatabaseUnavailable } from '@gatehouse/core/db';
import { GatehouseError } from '@gatehouse/core/errors';
import { tokenKind } from '@gatehouse/core/tokens';
import {
  type AcceptedVerdict,
  cdataOfOfflineToken,
  failureAnswer,
  nulIn,
  type Outcome,
  parseSiteverify,
  problemFor,
  readFields,
  SITEVERIFY_PATHS,
  tooLong,
  type Vendor,
  vendorAnswer,
} from '@gatehouse/standby/siteverify';
import { keyNamesApp } from '../apps/repository.ts';
import { findAppBySecret } from '../apps/secret-lookup.ts';
import { unavailable } from '../database-health.ts';
import type { Deps } from '../deps.ts';
import { type Route, route } from '../route-table.ts';
import { siteverifyDoc } from './siteverify-answers.ts';
import { checkToken } from './validate.ts';

export { SITEVERIFY_PATHS };

/**
 * Siteverify-compatible endpoints: the vendor's request (form, multipart or JSON; `secret`, `response`,
 * `remoteip`, `idempotency_key`, hCaptcha's `sitekey`) onto Gatehouse's validation (single use, idempotent
 * retries for the token's lifetime), answered in the vendor's shape. Verdicts are HTTP 200 as the vendors
 * answer them; only a failure of Gatehouse itself is a 5xx (with `success: false`, so nothing fails open).
 * The standby's fallback role serves the same paths (standby/src/siteverify/routes.ts).
 */
export const siteverifyRoutes: Route[] = (Object.entries(SITEVERIFY_PATHS) as [Vendor, string][]).flatMap(
  ([vendor, path]) => [
    route({
      method: 'post',
      path,
      doc: () => siteverifyDoc(vendor),
      handler: ({ deps }) =>
        async function siteverify(ctx) {
          let outcome: Outcome;
          const fields = await readFields(ctx, deps.config.bodyLimitBytes);
          if (fields && nulIn(fields)) {
            throw new GatehouseError(
              'invalid_request',
              'A field must not contain a NUL character (\\u0000).',
            );
          }
          try {
            outcome = await verify(deps, vendor, fields);
          } catch (thrown) {
            // A lost database answers 503 database_unavailable with Retry-After, logged once elsewhere.
            const error = isDatabaseUnavailable(thrown) ? unavailable() : thrown;
            if (!(error instanceof GatehouseError) || error.status >= 500 || error.status === 429) {
              if (!(error instanceof GatehouseError)) {
                deps.logger.error({ err: error, path: ctx.path }, 'siteverify failed');
              }
              return failureAnswer(ctx, vendor, error);
            }
            outcome = { ok: false, problems: [problemFor(error.code)] };
          }
          ctx.status = 200;
          return vendorAnswer(vendor, outcome);
        },
    }),
    // Only POST, whatever else shares the path's prefix (the Turnstile script is GET /turnstile/v0/:file):
    // OPTIONS says so, any other method is 405.
    route({
      method: 'all',
      path,
      doc: false,
      handler: () =>
        function onlyPost(ctx) {
          if (ctx.method !== 'OPTIONS') {
            throw new GatehouseError('method_not_allowed', undefined, { Allow: 'POST' });
          }
          ctx.set('Allow', 'POST');
          ctx.status = 200;
          ctx.body = '';
        },
    }),
  ],
);

/** 1. the fields, 2. the app from the secret alone, 3. hCaptcha's sitekey, 4. Gatehouse's validation. */
async function verify(deps: Deps, vendor: Vendor, fields: Record<string, unknown> | null): Promise<Outcome> {
  const parsed = parseSiteverify(vendor, fields);
  if (!parsed.ok) return parsed.outcome;
  const { secret, response, sitekey, clientIp, idempotencyKey } = parsed.request;

  const app = await findAppBySecret(deps.db, secret);
  if (!app || app.disabledAt) return { ok: false, problems: ['invalid-secret'] };
  if (sitekey && !keyNamesApp(app, sitekey)) return { ok: false, problems: ['sitekey-mismatch'] };
  if (tooLong(response)) return { ok: false, problems: ['invalid-response'] };

  const kind = tokenKind(response) ?? 'unknown';
  try {
    const data = (await checkToken(deps, app, response, {
      clientIp,
      idempotencyKey,
      retryForLifetime: true,
      withCdata: true,
    })) as Partial<AcceptedVerdict> & { valid: boolean; degraded?: boolean };
    deps.metrics.validations.inc({ kind, outcome: data.valid ? 'valid' : 'invalid' });
    if (data.degraded) return { ok: false, problems: ['invalid-response'], degraded: true };
    if (!data.valid || !data.action || !data.captcha_args) {
      return { ok: false, problems: ['invalid-response'] };
    }
    // An offline_ token carries its page's cdata itself (checked genuine by checkToken above).
    const cdata = kind === 'offline' ? cdataOfOfflineToken(response) : data.cdata;
    return {
      ok: true,
      verdict: { action: data.action, captcha_args: data.captcha_args, cdata, test_mode: app.testMode },
    };
  } catch (error) {
    if (error instanceof GatehouseError && error.status === 200) {
      deps.metrics.validations.inc({ kind, outcome: 'invalid' });
    }
    throw error;
  }
}
