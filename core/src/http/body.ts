import bourne from '@hapi/bourne';
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
  // JSON text can only carry a NUL as the escape \u0000 (a raw one is not valid JSON): a text read by
  // jsonBodies without that escape needs no walk of what it parsed to.
  const text = jsonTexts.get(ctx.request);
  const nul = text !== undefined && !text.includes('\\u0000') ? undefined : pathOfNul(body);
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
  // for the path of the first, so the common body pays for no path building.
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

/** The JSON text each request's body was parsed from by jsonBodies (for readBody's NUL check). */
const jsonTexts = new WeakMap<object, string>();

/** Whitespace JSON allows (RFC 8259), then an object or an array: what a strict parser accepts. */
const STRICT_JSON = /^[ \t\n\r]*[[{]/;
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Reads the bodies the widget and the SDKs send (`Content-Type: application/json` exactly, a
 * Content-Length, no Content-Encoding) and parses them as the general body parser after it would
 * (@koa/bodyparser with `jsonStrict`, through co-body and raw-body): the same limit, 413 for a body over
 * it, 400 for a length that does not match or a body that is not a JSON object or array, a leading BOM
 * dropped, `__proto__` keys refused (@hapi/bourne, as co-body does). Every other request, a compressed,
 * chunked or otherwise typed one, goes on to the general parser untouched. Why: that parser's path (media
 * type parsing twice, a stream decoder, five listeners and an options clone per request) costs more CPU than
 * the rest of reading a validation.
 *
 * Relies on @koa/bodyparser 6.1 (with co-body 6.2) leaving a request alone whose `ctx.request.body` is
 * already set: it must run before that parser, and its answers must stay the parser's (api/test/json-body.test.ts
 * compares the two over real HTTP). Nothing of Koa's own is touched.
 */
export function jsonBodies(limitBytes: number): Middleware {
  return function jsonBodies(ctx, next) {
    const { req } = ctx;
    const { headers } = req;
    const declared = headers['content-length'];
    if (
      headers['content-type'] !== 'application/json' ||
      headers['content-encoding'] !== undefined ||
      declared === undefined ||
      !/^\d{1,15}$/.test(declared) ||
      !PARSED_METHODS.has(req.method ?? '') ||
      (ctx.request as { body?: unknown }).body !== undefined ||
      req.readableEnded ||
      req.closed
    ) {
      return next();
    }
    const length = Number(declared);
    if (length > limitBytes) {
      req.pause();
      throw new GatehouseError('payload_too_large');
    }
    return readText(req, length).then((text) => {
      (ctx.request as { body?: unknown }).body = parseStrictJson(text);
      (ctx.request as { rawBody?: string }).rawBody = text;
      jsonTexts.set(ctx.request, text);
      return next();
    });
  };
}

/** The body's text, exactly `length` bytes of it (else a 400, as raw-body answers), decoded as UTF-8. */
function readText(req: Context['req'], length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const fail = (error: GatehouseError) => {
      cleanup();
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      // More than it declared: the declared length was a lie (a limit check on it alone would be bypassed).
      if (received > length)
        fail(new GatehouseError('invalid_request', 'The request body could not be parsed.'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (received !== length) {
        reject(new GatehouseError('invalid_request', 'The request body could not be parsed.'));
        return;
      }
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8');
      // raw-body decodes with iconv-lite, which drops a byte order mark.
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    };
    // The client went away before the body ended: nobody reads the answer, but nothing may hang either.
    const onAbort = () =>
      fail(new GatehouseError('invalid_request', 'The request body could not be parsed.'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

function parseStrictJson(text: string): unknown {
  // co-body's strict mode: an empty body is an empty object; anything but an object or array is refused.
  if (text === '') return {};
  try {
    if (!STRICT_JSON.test(text)) throw new SyntaxError('only objects and arrays');
    return bourne.parse(text, { protoAction: 'error' });
  } catch {
    throw new GatehouseError('invalid_request', 'The request body could not be parsed.');
  }
}
