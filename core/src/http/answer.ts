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
  if (!/\bjson\b/i.test(ctx.type)) ctx.type = 'application/json';
  ctx.body = JSON.stringify(value);
}

/** The JSON answer of a request: what `sendJson` sent, else an object body set directly; else undefined. */
export function answerOf(ctx: Context): unknown {
  if (ctx.state.answer !== undefined) return ctx.state.answer;
  const body = ctx.body;
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) ? body : undefined;
}
