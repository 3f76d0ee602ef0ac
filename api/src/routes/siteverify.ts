import { isDatabaseUnavailable } from '@gatehouse/core/db';
import { GatehouseError } from '@gatehouse/core/errors';
import { isIp } from '@gatehouse/core/ip';
import { MAX_TOKEN_LENGTH, tokenKind } from '@gatehouse/core/tokens';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { keyNamesApp } from '../apps/repository.ts';
import { findAppBySecret } from '../apps/secret-lookup.ts';
import { unavailable } from '../database-health.ts';
import type { Deps } from '../deps.ts';
import {
  type AcceptedVerdict,
  type Outcome,
  type Problem,
  problemFor,
  type Vendor,
  vendorAnswer,
} from './siteverify-vendors.ts';
import { checkToken } from './validate.ts';

/** The vendors' siteverify paths; an integration changes only the host (docs/migrating.md). */
export const SITEVERIFY_PATHS: Record<Vendor, string> = {
  turnstile: '/turnstile/v0/siteverify',
  recaptcha: '/recaptcha/api/siteverify',
  hcaptcha: '/siteverify',
};

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Siteverify-compatible endpoints: the vendor's request (form, multipart or JSON; `secret`, `response`,
 * `remoteip`, `idempotency_key`, hCaptcha's `sitekey`) onto Gatehouse's validation (single use, idempotent
 * retries for the token's lifetime), answered in the vendor's shape. Verdicts are HTTP 200 as the vendors
 * answer them; only a failure of Gatehouse itself is a 5xx (with `success: false`, so nothing fails open).
 */
export function siteverifyRoutes(router: Router, deps: Deps): void {
  for (const [vendor, path] of Object.entries(SITEVERIFY_PATHS) as [Vendor, string][]) {
    router.post(path, async function siteverify(ctx) {
      let outcome: Outcome;
      try {
        outcome = await verify(deps, vendor, await readFields(ctx, deps.config.bodyLimitBytes));
      } catch (thrown) {
        // A lost database answers 503 database_unavailable with Retry-After, logged once elsewhere.
        const error = isDatabaseUnavailable(thrown) ? unavailable() : thrown;
        if (!(error instanceof GatehouseError) || error.status >= 500 || error.status === 429) {
          if (!(error instanceof GatehouseError)) {
            deps.logger.error({ err: error, path: ctx.path }, 'siteverify failed');
          }
          const status = error instanceof GatehouseError ? error.status : 500;
          ctx.status = status;
          if (error instanceof GatehouseError) ctx.set(error.headers);
          ctx.body = vendorAnswer(vendor, { ok: false, problems: ['internal-error'] });
          return;
        }
        outcome = { ok: false, problems: [problemFor(error.code)] };
      }
      ctx.status = 200;
      ctx.body = vendorAnswer(vendor, outcome);
    });
    // Only POST, whatever else shares the path's prefix (the Turnstile script is GET /turnstile/v0/:file):
    // OPTIONS says so, any other method is 405.
    router.all(path, function onlyPost(ctx) {
      if (ctx.method !== 'OPTIONS') {
        throw new GatehouseError('method_not_allowed', undefined, { Allow: 'POST' });
      }
      ctx.set('Allow', 'POST');
      ctx.status = 200;
      ctx.body = '';
    });
  }
}

type Fields = Record<string, unknown>;

/** 1. presence, 2. the app from the secret alone, 3. the vendor's own checks, 4. Gatehouse's validation. */
async function verify(deps: Deps, vendor: Vendor, fields: Fields | null): Promise<Outcome> {
  if (fields === null) return { ok: false, problems: ['bad-request'] };
  const secret = text(fields.secret);
  const response = text(fields.response);
  if (secret === null || response === null) return { ok: false, problems: ['bad-request'] };
  const missing: Problem[] = [];
  if (!secret) missing.push('missing-secret');
  if (!response) missing.push('missing-response');
  if (missing.length) return { ok: false, problems: missing };

  const app = await findAppBySecret(deps.db, secret);
  if (!app || app.disabledAt) return { ok: false, problems: ['invalid-secret'] };

  const sitekey = text(fields.sitekey);
  if (sitekey === null) return { ok: false, problems: ['bad-request'] };
  if (sitekey && !keyNamesApp(app, sitekey)) return { ok: false, problems: ['sitekey-mismatch'] };

  // remoteip is a soft signal at Turnstile and reCAPTCHA: one that is not an address is ignored there;
  // hCaptcha documents an error code for it.
  const remoteip = text(fields.remoteip);
  if (remoteip === null) return { ok: false, problems: ['bad-request'] };
  let clientIp: string | undefined;
  if (remoteip && isIp(remoteip)) clientIp = remoteip;
  else if (remoteip && vendor === 'hcaptcha') return { ok: false, problems: ['invalid-remoteip'] };

  const idempotencyKey = text(fields.idempotency_key);
  if (idempotencyKey === null || (idempotencyKey && !IDEMPOTENCY_KEY.test(idempotencyKey))) {
    return { ok: false, problems: ['bad-request'] };
  }
  if (response.length > MAX_TOKEN_LENGTH) return { ok: false, problems: ['invalid-response'] };

  const kind = tokenKind(response) ?? 'unknown';
  try {
    const data = (await checkToken(deps, app, response, {
      clientIp,
      idempotencyKey: idempotencyKey || undefined,
      retryForLifetime: true,
      withCdata: true,
    })) as Partial<AcceptedVerdict> & { valid: boolean; degraded?: boolean };
    deps.metrics.validations.inc({ kind, outcome: data.valid ? 'valid' : 'invalid' });
    if (data.degraded) return { ok: false, problems: ['invalid-response'], degraded: true };
    if (!data.valid || !data.action || !data.captcha_args) {
      return { ok: false, problems: ['invalid-response'] };
    }
    return { ok: true, verdict: data as AcceptedVerdict };
  } catch (error) {
    if (error instanceof GatehouseError && error.status === 200) {
      deps.metrics.validations.inc({ kind, outcome: 'invalid' });
    }
    throw error;
  }
}

/** A field as a string: '' when absent, null when present but not a single string. */
function text(value: unknown): string | null {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : null;
}

/**
 * The request's fields: JSON and form bodies as the body parser read them; multipart (a `FormData`
 * body, as Cloudflare's Workers example sends) read here within the body limit. Null: not readable.
 */
async function readFields(ctx: Context, limit: number): Promise<Fields | null> {
  if (ctx.is('application/json', 'application/x-www-form-urlencoded')) {
    const body = (ctx.request as { body?: unknown }).body;
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Fields) : null;
  }
  if (!ctx.is('multipart/form-data')) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new GatehouseError('payload_too_large');
    chunks.push(chunk);
  }
  try {
    const form = await new Response(Buffer.concat(chunks), {
      headers: { 'content-type': ctx.get('content-type') },
    }).formData();
    const fields: Fields = {};
    form.forEach((value, key) => {
      // A repeated field or a file is not one string: refused like a JSON array.
      fields[key] = key in fields || typeof value !== 'string' ? [value] : value;
    });
    return fields;
  } catch {
    return null;
  }
}
