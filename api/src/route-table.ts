import type { ErrorCode } from '@gatehouse/core/errors';
import { parseOrThrow, readBody, sendJson } from '@gatehouse/core/http';
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import type { DatabaseHealth } from './database-health.ts';
import type { Deps } from './deps.ts';
import { answerSchema, pathParameter, requestSchema } from './json-schema.ts';

/**
 * One route table: each route is declared once (method, path, request schemas, documented answers,
 * handler), and both the router (`mountRoutes`) and the OpenAPI document's paths (`documentPaths`) are
 * built from the same declarations, so neither can name a route, a body or a parameter the other lacks.
 */

export type Method = 'get' | 'post' | 'patch' | 'delete' | 'options' | 'all';

/** What a handler may use: the app's dependencies and the database's health (readiness). */
export interface RouteServices {
  deps: Deps;
  databaseHealth: DatabaseHealth;
  /** The OpenAPI document, built from this table on first use (the app supplies it: openapi.ts). */
  openapiDocument: () => Promise<object>;
}

type ParamSchemas = Record<string, z.ZodType>;

type QuerySchema = z.ZodType<object>;

export interface RouteInput<
  B extends z.ZodType | undefined,
  P extends ParamSchemas | undefined,
  Q extends QuerySchema | undefined = undefined,
> {
  body: B extends z.ZodType ? z.output<B> : undefined;
  params: P extends ParamSchemas ? { [K in keyof P]: z.output<P[K]> } : Record<string, never>;
  query: Q extends QuerySchema ? z.output<Q> : undefined;
}

type MediaType = 'json' | 'form' | 'multipart';

const MEDIA: Record<MediaType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
};

/**
 * One documented answer of a status: JSON unless said, its body and headers as zod schemas (a value's
 * description is its schema's `.meta({ description })`). Documentation only: nothing checks an answer
 * against it at run time (the tests check every answer they receive against the document).
 */
export interface Answer {
  description: string;
  /** The JSON body's schema. */
  json?: z.ZodType;
  /** Bodies of other media types, by media type. */
  content?: Record<string, z.ZodType>;
  headers?: Record<string, z.ZodType>;
  /** OpenAPI links: where the answer leads. */
  links?: Record<string, object>;
  /** The error codes an envelope answer names (errors() sets them), for what extends the answer. */
  codes?: readonly ErrorCode[];
}

/** What the document says of a route beyond its schemas (the request body, path and query are derived). */
export interface RouteDoc {
  summary: string;
  description?: string;
  security?: readonly Record<string, readonly string[]>[];
  /**
   * Header parameters the route's middleware reads and checks itself (required unless `.optional()`);
   * the credentials of security schemes are not listed here.
   */
  headers?: Record<string, z.ZodType>;
  /** Path parameters the route checks itself (no `params` schema), described at the path's level. */
  pathParameters?: Record<string, z.ZodType>;
  /**
   * For a route that reads its body itself and refuses no body (it answers a malformed one in-band): the
   * fields it reads, named and described in the body's description, under a schema that allows anything,
   * so that the document calls no request invalid that the route accepts.
   */
  describedBody?: {
    description: string;
    fields: z.ZodObject;
    types: readonly MediaType[];
    required: boolean;
  };
  responses: Record<string, Answer>;
}

export interface Route<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  P extends ParamSchemas | undefined = ParamSchemas | undefined,
  Q extends QuerySchema | undefined = QuerySchema | undefined,
> {
  method: Method;
  /** The path in OpenAPI's form: `{name}` for a parameter. */
  path: string;
  /**
   * What the document says of it; false for a route the document leaves out (pages, CORS preflights).
   * Built when the document is (on its first request), so its schemas take no memory in a replica that
   * never serves it.
   */
  doc: (() => RouteDoc) | false;
  /** The request body's schema: read and checked (readBody) before the handler runs. */
  body?: B;
  /** Media types the body may come as; JSON unless said. */
  bodyTypes?: readonly Exclude<MediaType, 'multipart'>[];
  /** The body may be left out: the schema then parses `{}`. */
  bodyOptional?: true;
  /** Path parameters by name, each checked before the handler runs. */
  params?: P;
  /** The query string's parameters, checked before the handler runs (a `.default()` makes one optional). */
  query?: Q;
  /**
   * Most of the load (the widget's init, the integrator's validate): also mounted on a router of its own,
   * tried first, so that these requests are matched against a handful of routes, not the whole table.
   */
  hot?: true;
  /** Middleware before the body is read (CORS, authentication), built once per app. */
  use?: (services: RouteServices) => Middleware[];
  /**
   * Built once per app. What the handler returns, unless undefined, is the answer, sent as JSON text
   * (`sendJson`, which keeps it for the middleware that reads answers); a handler that returns nothing has set the answer itself (a page, a file, metrics).
   */
  handler: (
    services: RouteServices,
  ) => (ctx: Context, input: RouteInput<B, P, Q>, next: Next) => unknown | Promise<unknown>;
}

/** Declares a route, with the handler's input typed from the route's schemas. */
export function route<
  B extends z.ZodType | undefined = undefined,
  P extends ParamSchemas | undefined = undefined,
  Q extends QuerySchema | undefined = undefined,
>(spec: Route<B, P, Q>): Route {
  return spec as unknown as Route;
}

/** `{name}` (OpenAPI) to `:name` (the router). */
const routerPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** Registers every route on the router, in the table's order. */
export function mountRoutes(router: Router, routes: readonly Route[], services: RouteServices): void {
  for (const spec of routes) {
    const handle = spec.handler(services);
    const params = spec.params ? z.object(spec.params) : undefined;
    const types = [...(spec.bodyTypes ?? ['json'])];
    const name = handle.name || 'handler';
    const run = {
      async [name](ctx: Context, next: Next) {
        let body: unknown;
        if (spec.body) {
          // A chunked body has no Content-Length: ignoring it would silently apply the default.
          const sent = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
          body = spec.bodyOptional && !sent ? spec.body.parse({}) : readBody(ctx, spec.body, types);
        }
        const values = params ? parseOrThrow(params, (ctx as { params?: object }).params ?? {}) : {};
        const query = spec.query ? parseOrThrow(spec.query, ctx.query) : undefined;
        const input = { body, params: values, query } as RouteInput<undefined, undefined>;
        const answer = await handle(ctx, input, next);
        if (answer !== undefined) sendJson(ctx, answer);
      },
    }[name] as Middleware;
    const chain = [...(spec.use?.(services) ?? []), run];
    const path = routerPath(spec.path);
    if (spec.method === 'all') router.all(path, ...chain);
    else router[spec.method](path, ...chain);
  }
}

/**
 * The OpenAPI `paths` object of the documented routes: one operation per route, in table order, its
 * schemas generated from the route's zod declarations. `answers` may extend a route's documented answers
 * (a rule every operation of a kind follows) before they are written.
 */
export function documentPaths(
  routes: readonly Route[],
  answers: (doc: RouteDoc) => Record<string, Answer> = (doc) => doc.responses,
): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    if (spec.doc === false) continue;
    const doc = spec.doc();
    const item = paths[spec.path] ?? {};
    paths[spec.path] = item;
    if (spec.params) {
      item.parameters = Object.entries(spec.params).map(([name, schema]) => pathParameter(name, schema));
    }
    const { summary, description, security, headers, pathParameters, describedBody } = doc;
    if (pathParameters) {
      item.parameters = Object.entries(pathParameters).map(([name, schema]) => ({
        name,
        in: 'path',
        required: true,
        schema: answerSchema(schema),
      }));
    }
    const op: Record<string, unknown> = { summary };
    if (description !== undefined) op.description = description;
    if (security !== undefined) op.security = security;
    const all = [
      ...(spec.query ? parameters('query', requestSchema(spec.query)) : []),
      ...(headers ? parameters('header', answerSchema(z.object(headers))) : []),
    ];
    if (all.length > 0) op.parameters = all;
    if (describedBody !== undefined) {
      const { description: text, fields, types, required } = describedBody;
      op.requestBody = {
        description: `${text} ${fieldList(fields)}`,
        required,
        content: Object.fromEntries(types.map((type) => [MEDIA[type], { schema: {} }])),
      };
    }
    if (spec.body) {
      const schema = requestSchema(spec.body);
      const content = Object.fromEntries(
        (spec.bodyTypes ?? ['json']).map((type) => [MEDIA[type], { schema }]),
      );
      op.requestBody = { required: !spec.bodyOptional, content };
    }
    op.responses = Object.fromEntries(
      Object.entries(answers(doc)).map(([status, answer]) => [status, responseObject(answer)]),
    );
    item[spec.method] = op;
  }
  return paths;
}

/** An OpenAPI response object from an answer's declaration. */
function responseObject(answer: Answer): object {
  const out: Record<string, unknown> = { description: answer.description };
  const bodies = { ...(answer.json ? { [MEDIA.json]: answer.json } : {}), ...answer.content };
  if (Object.keys(bodies).length > 0) {
    out.content = Object.fromEntries(
      Object.entries(bodies).map(([type, schema]) => [type, { schema: answerSchema(schema) }]),
    );
  }
  if (answer.headers) {
    out.headers = Object.fromEntries(
      Object.entries(answer.headers).map(([name, schema]) => {
        const { description, ...rest } = answerSchema(schema);
        return [name, { ...(description === undefined ? {} : { description }), schema: rest }];
      }),
    );
  }
  if (answer.links) out.links = answer.links;
  return out;
}

/** `Fields: name (optional): description; ...`, from an object schema's properties. */
function fieldList(fields: z.ZodObject): string {
  const { properties = {}, required = [] } = answerSchema(fields) as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  const each = Object.entries(properties).map(
    ([name, { description }]) =>
      `${name}${required.includes(name) ? '' : ' (optional)'}${description ? `: ${description}` : ''}`,
  );
  return `Fields: ${each.join('; ')}.`;
}

/** The parameters an object schema names, each described by its property's JSON Schema. */
function parameters(where: 'query' | 'header', schema: Record<string, unknown>): object[] {
  const { properties = {}, required = [] } = schema as {
    properties?: Record<string, object>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string };
    return {
      name,
      in: where,
      required: required.includes(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}
