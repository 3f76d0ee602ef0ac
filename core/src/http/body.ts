import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { GatehouseError } from '../errors.ts';

type BodyType = 'json' | 'form';
const MEDIA: Record<BodyType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
};

/**
 * Reads the parsed body of a request: 1. the Content-Type is one this route takes (else 415),
 * 2. the body is an object, 3. no string in it holds a NUL, 4. it matches the schema (else 400 naming the
 * first bad field). The charset was checked before parsing (utf8Only).
 */
export function readBody<S extends z.ZodType>(
  ctx: Context,
  schema: S,
  types: BodyType[] = ['json'],
): z.infer<S> {
  // What the widget and the SDKs send is taken as it is; anything else is parsed and compared (type-is).
  // (type-is also answers no match for a request without a body: so does this.)
  const { headers } = ctx.req;
  const plainJson =
    types.includes('json') &&
    headers['content-type'] === MEDIA.json &&
    (headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'])));
  const accepted = plainJson ? undefined : types.map((t) => MEDIA[t]);
  if (accepted && !ctx.is(accepted)) {
    throw new GatehouseError('unsupported_media_type', `Content-Type must be ${accepted.join(' or ')}.`);
  }
  const body = (ctx.request as { body?: unknown }).body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatehouseError('invalid_request', 'The request body must be an object.');
  }
  const nul = pathOfNul(body);
  if (nul !== undefined) {
    throw new GatehouseError('invalid_request', `${nul}: must not contain a NUL character (\\u0000).`);
  }
  return parseOrThrow(schema, body);
}

/**
 * Where the first NUL character sits in a parsed body (a key or a string value, at any depth), as the
 * field path the error names; undefined when there is none. PostgreSQL stores no NUL in text or jsonb, and
 * no field of any endpoint has a use for one, so every body is checked here, once, before its schema.
 * Iterative: a deeply nested body must not exhaust the stack.
 */
export function pathOfNul(body: object): string | undefined {
  // Almost every body holds none: a walk that builds no paths says so; only a body with one is walked again
  // for the path of the first.
  if (!holdsNul(body)) return undefined;
  // Breadth first, so the field named is the shallowest one, in the order the body gave them.
  const pending: [unknown, (string | number)[]][] = [[body, []]];
  for (let next = 0; next < pending.length; next++) {
    const [value, path] = pending[next]!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return fieldName(path);
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) pending.push([item, [...path, i]]);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) return fieldName(path);
        pending.push([item, [...path, key]]);
      }
    }
  }
  return undefined;
}

/** Whether a NUL sits anywhere in a key or a string value, at any depth (iterative, as pathOfNul). */
function holdsNul(body: object): boolean {
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (key.includes('\u0000')) return true;
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

const fieldName = (path: (string | number)[]) => (path.length ? path.join('.') : 'body');

/** Validates a value against a schema, turning the first issue into an `invalid_request` sentence. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.length ? issue.path.join('.') : 'body';
    throw new GatehouseError('invalid_request', `${field}: ${issue.message}`);
  }
  return result.data;
}

/**
 * Refuses, with 415, a request body declared in any charset but UTF-8, before a parser reads it: the body
 * parsers decode every body as UTF-8 whatever it declares, so a UTF-16 body would be misread, not refused.
 * No charset means UTF-8 (RFC 8259 for JSON; form bodies as browsers send them).
 */
export function utf8Only(): Middleware {
  // Not async: it has nothing to do after the layers below, so it hands their promise back (one async frame less).
  return function utf8Only(ctx, next) {
    // The widget's and the SDKs' Content-Type names no charset: nothing to parse.
    if (ctx.req.headers['content-type'] === 'application/json') return next();
    const hasBody = ctx.get('Content-Length') !== '' || ctx.get('Transfer-Encoding') !== '';
    // Koa reads the parameter with the `content-type` package: unquoted, '' when absent or unparseable
    // (an unparseable Content-Type is then refused by readBody's type check).
    const charset = ctx.request.charset.toLowerCase();
    if (hasBody && charset !== '' && charset !== 'utf-8') {
      throw new GatehouseError(
        'unsupported_media_type',
        'Request bodies must be UTF-8: send charset=utf-8 or no charset.',
      );
    }
    return next();
  };
}
