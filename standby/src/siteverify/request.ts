import { GatehouseError } from '@gatehouse/core/errors';
import { pathOfNul } from '@gatehouse/core/http';
import { isIp } from '@gatehouse/core/ip';
import { MAX_TOKEN_LENGTH } from '@gatehouse/core/tokens';
import type { Context, Middleware } from 'koa';
import { type Outcome, type Problem, type Vendor, vendorAnswer } from './vendors.ts';

/**
 * The vendors' siteverify paths, served by the main API and by the standby's fallback role alike; an
 * integration changes only the host (docs/migrating.md).
 */
export const SITEVERIFY_PATHS: Record<Vendor, string> = {
  turnstile: '/turnstile/v0/siteverify',
  recaptcha: '/recaptcha/api/siteverify',
  hcaptcha: '/siteverify',
};

const VENDOR_OF_PATH = new Map(
  (Object.entries(SITEVERIFY_PATHS) as [Vendor, string][]).map(([vendor, path]) => [path, vendor]),
);

/** Turnstile documents `idempotency_key` as a UUID; the other vendors have none, the same form is asked. */
const IDEMPOTENCY_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Fields = Record<string, unknown>;

/** What a siteverify request asks, its fields read and checked; the app is found from `secret` afterwards. */
export interface SiteverifyRequest {
  secret: string;
  response: string;
  /** hCaptcha's optional app-key check; '' when absent. */
  sitekey: string;
  clientIp: string | undefined;
  idempotencyKey: string | undefined;
}

type Parsed = { ok: true; request: SiteverifyRequest } | { ok: false; outcome: Outcome };
const refuse = (...problems: Problem[]): Parsed => ({ ok: false, outcome: { ok: false, problems } });

/**
 * The request's fields checked in the vendors' order: presence of secret and response first (their own
 * codes), then the optional fields' form. The app (from the secret) and the token are the caller's.
 */
export function parseSiteverify(vendor: Vendor, fields: Fields | null): Parsed {
  if (fields === null) return refuse('bad-request');
  const secret = text(fields.secret);
  const response = text(fields.response);
  if (secret === null || response === null) return refuse('bad-request');
  const missing: Problem[] = [];
  if (!secret) missing.push('missing-secret');
  if (!response) missing.push('missing-response');
  if (missing.length) return refuse(...missing);

  const sitekey = text(fields.sitekey);
  if (sitekey === null) return refuse('bad-request');
  // remoteip is a soft signal at Turnstile and reCAPTCHA: one that is not an address is ignored there;
  // hCaptcha documents an error code for it.
  const remoteip = text(fields.remoteip);
  if (remoteip === null) return refuse('bad-request');
  let clientIp: string | undefined;
  if (remoteip && isIp(remoteip)) clientIp = remoteip;
  else if (remoteip && vendor === 'hcaptcha') return refuse('invalid-remoteip');

  const idempotencyKey = text(fields.idempotency_key);
  if (idempotencyKey === null || (idempotencyKey && !IDEMPOTENCY_KEY.test(idempotencyKey))) {
    return refuse('bad-request');
  }
  return {
    ok: true,
    request: { secret, response, sitekey, clientIp, idempotencyKey: idempotencyKey || undefined },
  };
}

/** A response longer than any token Gatehouse mints is not one: refused before any look-up. */
export const tooLong = (response: string) => response.length > MAX_TOKEN_LENGTH;

/** A field as a string: '' when absent, null when present but not a single string. */
function text(value: unknown): string | null {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : null;
}

/**
 * The request's fields: JSON and form bodies as the body parser read them; multipart (a `FormData`
 * body, as Cloudflare's Workers example sends) read here within the body limit. Null: not readable.
 */
export async function readFields(ctx: Context, limit: number): Promise<Fields | null> {
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
  let form: FormData;
  try {
    form = await new Response(Buffer.concat(chunks), {
      headers: { 'content-type': ctx.get('content-type') },
    }).formData();
  } catch {
    return null;
  }
  const fields: Fields = {};
  form.forEach((value, key) => {
    // A repeated field or a file is not one string: refused like a JSON array.
    fields[key] = key in fields || typeof value !== 'string' ? [value] : value;
  });
  return fields;
}

/** No field of a siteverify request has a use for a NUL (docs/security.md): the request's 400. */
export function nulIn(fields: Fields): boolean {
  return pathOfNul(fields) !== undefined;
}

/**
 * The siteverify paths answer a request refused before its fields are read in the vendor's shape, with
 * its status: a body over the limit (413), a media type or charset not read (415), a body that does not
 * parse or holds a NUL (400). The authentication throttle's 429 keeps Gatehouse's envelope, as on every
 * guarded route. Placed above the body parsers; other paths pass through untouched.
 */
export function siteverifyBoundary(): Middleware {
  // Not async: every other path gets next()'s promise back, without a frame of its own.
  return function siteverifyBoundary(ctx, next) {
    const vendor = ctx.method === 'POST' ? VENDOR_OF_PATH.get(ctx.path) : undefined;
    if (vendor === undefined) return next();
    return next().catch((thrown: unknown) => {
      const status = (thrown as { status?: unknown }).status;
      if (status !== 400 && status !== 413 && status !== 415) throw thrown;
      ctx.status = status;
      if (thrown instanceof GatehouseError) ctx.set(thrown.headers);
      ctx.body = vendorAnswer(vendor, { ok: false, problems: ['bad-request'] });
    });
  };
}

/**
 * A failure of Gatehouse itself, answered in the vendor's shape so that nothing fails open: `success:
 * false` with `internal-error`, under the error's own status and headers (a GatehouseError's, such as a
 * 503 with Retry-After), or 500 for anything else. Which errors count as such a failure, rather than as a
 * verdict in a 200, is the caller's rule.
 */
export function failureAnswer(ctx: Context, vendor: Vendor, error: unknown): Record<string, unknown> {
  ctx.status = error instanceof GatehouseError ? error.status : 500;
  if (error instanceof GatehouseError) ctx.set(error.headers);
  return vendorAnswer(vendor, { ok: false, problems: ['internal-error'] });
}
