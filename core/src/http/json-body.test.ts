import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody } from './json-body.ts';

/** Which requests the direct reader takes and which it hands to the general parser (here a stand-in). */
describe('jsonBody', () => {
  const handedOver: string[] = [];
  let url: string;
  let close: () => void;

  beforeAll(async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        ctx.status = (error as { status?: number }).status ?? 500;
        ctx.body = { failed: (error as Error).message };
      }
    });
    app.use(
      jsonBody(64, async function general(ctx, next) {
        handedOver.push(ctx.get('Content-Type'));
        (ctx.request as { body?: unknown }).body = { general: true };
        await next();
      }),
    );
    app.use((ctx) => {
      ctx.body = { body: (ctx.request as { body?: unknown }).body ?? null };
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close?.());

  async function post(body: string, headers: Record<string, string>) {
    const res = await fetch(url, { method: 'POST', headers, body });
    return { status: res.status, body: await res.json() };
  }

  it('reads application/json with a length itself, with or without a UTF-8 charset', async () => {
    handedOver.length = 0;
    expect(await post('{"a":1}', { 'Content-Type': 'application/json' })).toEqual({
      status: 200,
      body: { body: { a: 1 } },
    });
    expect((await post('[1]', { 'Content-Type': 'Application/JSON; charset="UTF-8"' })).body).toEqual({
      body: [1],
    });
    expect(handedOver).toEqual([]);
  });

  it('hands everything else to the general parser', async () => {
    handedOver.length = 0;
    const types = [
      'application/vnd.api+json',
      'application/json; charset=utf-16',
      'application/x-www-form-urlencoded',
    ];
    for (const type of types)
      expect((await post('{}', { 'Content-Type': type })).body).toEqual({ body: { general: true } });
    // Over the limit (64 bytes): the general parser answers 413 as it always did.
    await post(JSON.stringify({ a: 'x'.repeat(100) }), { 'Content-Type': 'application/json' });
    await post('{}', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect(handedOver).toEqual([...types, 'application/json', 'application/json']);
  });

  it('refuses what the general parser refuses in strict mode, with 400', async () => {
    for (const body of ['{', '1', '"s"', '{"__proto__":{}}', '{"a":{"\\u005f\\u005fproto__":1}}']) {
      expect((await post(body, { 'Content-Type': 'application/json' })).status, body).toBe(400);
    }
    expect(await post('', { 'Content-Type': 'application/json' })).toEqual({
      status: 200,
      body: { body: {} },
    });
  });
});
