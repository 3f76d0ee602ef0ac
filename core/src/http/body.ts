import type { Context } from 'koa';
import type { z } from 'zod';
import { GatehouseError } from '../errors.ts';

type BodyType = 'json' | 'form';
const MEDIA: Record<BodyType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
};

/**
 * Reads the parsed body of a request: 1. the Content-Type is one this route takes (else 415),
 * 2. the body is an object, 3. it matches the schema (else 400 naming the first bad field).
 */
export function readBody<S extends z.ZodType>(
  ctx: Context,
  schema: S,
  types: BodyType[] = ['json'],
): z.infer<S> {
  const accepted = types.map((t) => MEDIA[t]);
  if (!ctx.is(accepted)) {
    throw new GatehouseError('unsupported_media_type', `Content-Type must be ${accepted.join(' or ')}.`);
  }
  const body = (ctx.request as { body?: unknown }).body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatehouseError('invalid_request', 'The request body must be an object.');
  }
  return parseOrThrow(schema, body);
}

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
