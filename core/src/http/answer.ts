import type { Context } from 'koa';

/**
 * Sends a value as JSON text with the JSON media type, and keeps the value as the request's answer for the
 * middleware that reads it once the handler ran (the request log, the usage counters, the authentication
 * throttle): `answerOf`. Text, not an object body: Koa tests an object body against the fetch API's classes
 * (Blob, ReadableStream, Response), and naming `Response` loads Node's whole fetch implementation, which no
 * Gatehouse service otherwise uses, into every process. The bytes and headers are those Koa would send.
 */
export function sendJson(ctx: Context, value: unknown): void {
  ctx.state.answer = value;
  // A JSON type already chosen (problem+json) stays; otherwise the header `ctx.type = 'application/json'`
  // writes, set as it is rather than looked up in the media-type table on every answer.
  if (!JSON_MEDIA_TYPE.test(ctx.response.get('Content-Type'))) ctx.set('Content-Type', JSON_CONTENT_TYPE);
  ctx.body = JSON.stringify(value);
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** A media type (its parameters left out) that names JSON. */
const JSON_MEDIA_TYPE = /^[^;]*\bjson\b/i;

/** The JSON answer of a request: what `sendJson` sent, else an object body set directly; else undefined. */
export function answerOf(ctx: Context): unknown {
  if (ctx.state.answer !== undefined) return ctx.state.answer;
  const body = ctx.body;
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) ? body : undefined;
}
