import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import pino, { type LoggerOptions } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestContext } from './request-context.ts';

/**
 * The request line is built by hand for a plain pino logger: it must be, byte for byte, the line
 * pino writes for the same fields, whatever the logger's level format, time, bindings or level; and a
 * logger whose lines something else shapes (a mixin here) goes through pino itself.
 */
async function requestLines(options: LoggerOptions, bindings: Record<string, unknown> | undefined) {
  const out: string[] = [];
  const capture = new Writable({
    write(chunk, _encoding, done) {
      out.push(...String(chunk).split(/(?<=\n)/));
      done();
    },
  });
  const base = pino({ level: 'debug', ...options }, capture);
  const logger = bindings ? base.child(bindings) : base;
  const app = new Koa();
  app.use(requestContext(logger));
  app.use((ctx) => {
    if (ctx.path.startsWith('/fail')) {
      ctx.status = 400;
      ctx.body = { code: -1, error: 'invalid_"request\\' };
    } else if (ctx.path === '/boom') {
      ctx.status = 503;
      ctx.body = { error: 42 };
    } else ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const path of ['/v1/challenge/init', '/fail/%22quote%5C', '/boom', '/healthz', '/caf%C3%A9?x=1'])
      await (await fetch(url + path, { method: 'POST', headers: { 'X-Request-Id': 'req-1' } })).text();
  } finally {
    server.close();
  }
  // Each line again through pino itself, from its parsed fields, on the same logger.
  const fast = out.splice(0);
  const child = logger.child({}, { redact: [] });
  for (const line of fast) {
    const { level, reqId, method, path, status, ms, error } = JSON.parse(line);
    const name = typeof level === 'number' ? pino.levels.labels[level]! : level;
    const fields =
      error === undefined ? { reqId, method, path, status, ms } : { reqId, method, path, status, ms, error };
    child[name as 'info'](fields, 'request');
  }
  const time = (s: string) => s.replace(/"time":("[^"]*"|\d+)/, '"time":0');
  return { fast, pino: out.splice(0), time };
}

describe('request line', () => {
  const cases: [string, LoggerOptions, Record<string, unknown> | undefined][] = [
    ['a plain logger', {}, undefined],
    ['a child with bindings', {}, { service: 'api', n: 1 }],
    [
      'ISO time and level labels',
      { timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
      undefined,
    ],
    ['no pid or hostname', { base: undefined }, undefined],
    ['a mixin (pino writes it)', { mixin: () => ({ extra: 'yes' }) }, undefined],
  ];
  for (const [name, options, bindings] of cases) {
    it(`is what pino writes: ${name}`, async () => {
      const { fast, pino: reference, time } = await requestLines(options, bindings);
      expect(fast).toHaveLength(5);
      expect(fast.map(time)).toEqual(reference.map(time));
      const parsed = fast.map((l) => JSON.parse(l));
      expect(parsed.map((l) => [l.path, l.status, l.error, l.reqId, l.msg])).toEqual([
        ['/v1/challenge/init', 200, undefined, 'req-1', 'request'],
        ['/fail/%22quote%5C', 400, 'invalid_"request\\', 'req-1', 'request'],
        ['/boom', 503, undefined, 'req-1', 'request'],
        ['/healthz', 200, undefined, 'req-1', 'request'],
        ['/caf%C3%A9', 200, undefined, 'req-1', 'request'],
      ]);
      // The probe is at debug, everything else at info; a mixin's field is there when there is one.
      const levels = parsed.map((l) => (typeof l.level === 'number' ? pino.levels.labels[l.level] : l.level));
      expect(levels).toEqual(['info', 'info', 'info', 'debug', 'info']);
      if (options.mixin) expect(parsed[0].extra).toBe('yes');
      if (bindings) expect(parsed[0].service).toBe('api');
      for (const l of parsed) expect(typeof l.ms).toBe('number');
    });
  }
});
