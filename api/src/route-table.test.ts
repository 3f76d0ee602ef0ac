import type { AddressInfo } from 'node:net';
import { errorEnvelope } from '@gatehouse/core/http';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { documentPaths, mountRoutes, type Route, type RouteServices, route } from './route-table.ts';

const itemBody = z.object({ name: z.string().min(1), count: z.number().int().default(1) }).strict();
const idParam = z.string().regex(/^it_[a-z]+$/, 'not an item id');

const TABLE: Route[] = [
  route({
    method: 'post',
    path: '/items/{id}',
    doc: () => ({ summary: 'Make an item', responses: { '201': { description: 'Made' } } }),
    body: itemBody,
    params: { id: idParam },
    use: () => [
      function tag(ctx, next) {
        ctx.set('X-Used', 'yes');
        return next();
      },
    ],
    handler: () =>
      function make(ctx, { body, params }) {
        ctx.status = 201;
        return { id: params.id, ...body };
      },
  }),
  route({
    method: 'post',
    path: '/items/{id}/reset',
    doc: () => ({ summary: 'Reset', responses: { '200': { description: 'Reset' } } }),
    body: z.object({ to: z.number().int().default(0) }).strict(),
    bodyOptional: true,
    params: { id: idParam },
    handler: () =>
      function reset(_ctx, { body }) {
        return { to: body.to };
      },
  }),
  route({
    method: 'get',
    path: '/items',
    doc: () => ({ summary: 'List items', responses: { '200': { description: 'Items' } } }),
    query: z.object({
      limit: z.coerce.number().int().min(1).max(50).default(10).meta({ description: 'At most this many' }),
      after: z
        .string()
        .regex(/^it_[a-z]+$/)
        .optional(),
    }),
    handler: () =>
      function list(_ctx, { query }) {
        return query;
      },
  }),
  route({
    method: 'get',
    path: '/page',
    doc: false,
    handler: () =>
      function page(ctx) {
        ctx.type = 'text/html';
        ctx.body = '<p>page</p>';
      },
  }),
];

describe('the route table', () => {
  let url: string;
  let server: ReturnType<Koa['listen']>;

  beforeAll(async () => {
    const app = new Koa();
    const router = new Router();
    mountRoutes(router, TABLE, {} as RouteServices);
    app.use(errorEnvelope(pino({ level: 'silent' })));
    app.use(bodyParser({ enableTypes: ['json'] }));
    app.use(router.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server?.close());

  const post = (path: string, body?: unknown) =>
    fetch(url + path, {
      method: 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it("runs the route's middleware, then hands the handler its checked body and parameters", async () => {
    const res = await post('/items/it_abc', { name: 'box' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-used')).toBe('yes');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({ id: 'it_abc', name: 'box', count: 1 });
  });

  it('refuses a body or a path parameter its schema refuses, naming the field', async () => {
    const body = await post('/items/it_abc', { name: '' });
    expect(body.status).toBe(400);
    expect(await body.json()).toMatchObject({ error: 'invalid_request', message: /^name: / });
    const param = await post('/items/nope', { name: 'box' });
    expect(param.status).toBe(400);
    expect(await param.json()).toMatchObject({ error: 'invalid_request', message: 'id: not an item id' });
  });

  it('parses an empty object for an optional body left out, and reads one that is sent', async () => {
    expect(await (await post('/items/it_abc/reset')).json()).toEqual({ to: 0 });
    expect(await (await post('/items/it_abc/reset', { to: 3 })).json()).toEqual({ to: 3 });
  });

  it('hands the handler its checked query, defaults filled in, and refuses a value out of bounds', async () => {
    expect(await (await fetch(`${url}/items`)).json()).toEqual({ limit: 10 });
    expect(await (await fetch(`${url}/items?limit=5&after=it_x`)).json()).toEqual({
      limit: 5,
      after: 'it_x',
    });
    const refused = await fetch(`${url}/items?limit=51`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_request', message: /^limit: / });
  });

  it('leaves the answer to a handler that returns nothing', async () => {
    const res = await fetch(`${url}/page`);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('<p>page</p>');
  });

  it('documents each documented route from its declaration, and no other', () => {
    const paths = documentPaths(TABLE);
    expect(Object.keys(paths)).toEqual(['/items/{id}', '/items/{id}/reset', '/items']);
    expect((paths['/items']!.get as { parameters: object[] }).parameters).toEqual([
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'At most this many',
        schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
      },
      { name: 'after', in: 'query', required: false, schema: { type: 'string', pattern: '^it_[a-z]+$' } },
    ]);
    const item = paths['/items/{id}']!;
    expect(item.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true, schema: expect.any(Object) }),
    ]);
    const op = item.post as { summary: string; requestBody: { required: boolean; content: object } };
    expect(op.summary).toBe('Make an item');
    expect(op.requestBody.required).toBe(true);
    const schema = (op.requestBody.content as Record<string, { schema: Record<string, unknown> }>)[
      'application/json'
    ]!.schema;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer', default: 1 } },
    });
    const reset = paths['/items/{id}/reset']!.post as { requestBody: { required: boolean } };
    expect(reset.requestBody.required).toBe(false);
  });

  it("writes each answer's zod declarations as JSON Schema of what is sent, and the doc-only parts", () => {
    const item = z.object({ id: z.string().regex(/^it_/), made: z.int() });
    const paths = documentPaths([
      route({
        method: 'post',
        path: '/forms',
        doc: () => ({
          summary: 'Take a form',
          headers: {
            'X-Token': z.string().meta({ description: 'The form token' }),
            'X-Trace': z.string().optional(),
          },
          describedBody: {
            description: 'Anything goes.',
            fields: z.object({ a: z.string().meta({ description: 'first' }), b: z.string().optional() }),
            types: ['form', 'json'],
            required: false,
          },
          responses: {
            '200': { description: 'The item', json: item, links: { Next: { operationId: 'x' } } },
            '204': { description: 'Nothing' },
            '429': {
              description: 'Slow down',
              json: z.looseObject({ wait: z.int() }),
              headers: { 'Retry-After': z.int().min(0).meta({ description: 'Seconds' }) },
            },
          },
        }),
        handler: () => () => undefined,
      }),
    ]);
    const op = paths['/forms']!.post as {
      parameters: object[];
      requestBody: object;
      responses: Record<string, { content: Record<string, { schema: object }>; headers?: object }>;
    };
    expect(op.parameters).toEqual([
      {
        name: 'X-Token',
        in: 'header',
        required: true,
        description: 'The form token',
        schema: { type: 'string' },
      },
      { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
    ]);
    expect(op.requestBody).toEqual({
      description: 'Anything goes. Fields: a: first; b (optional).',
      required: false,
      content: { 'application/x-www-form-urlencoded': { schema: {} }, 'application/json': { schema: {} } },
    });
    // Read as output: an object is closed, no dialect is named, no safe-integer bounds.
    expect(op.responses['200']).toEqual({
      description: 'The item',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { id: { type: 'string', pattern: '^it_' }, made: { type: 'integer' } },
            required: ['id', 'made'],
            additionalProperties: false,
          },
        },
      },
      links: { Next: { operationId: 'x' } },
    });
    expect(op.responses['204']).toEqual({ description: 'Nothing' });
    expect(op.responses['429']!.content['application/json']!.schema).toMatchObject({
      additionalProperties: {},
    });
    expect(op.responses['429']!.headers).toEqual({
      'Retry-After': { description: 'Seconds', schema: { type: 'integer', minimum: 0 } },
    });
  });
});
