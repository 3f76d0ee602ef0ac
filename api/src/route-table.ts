import { parseOrThrow, readBody, sendJson } from '@gatehouse/core/http';
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import type { DatabaseHealth } from './database-health.ts';
import type { Deps } from './deps.ts';
import { pathParameter, requestSchema } from './openapi-request.ts';

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

/** The operation object's hand-written part; requestBody and path parameters are derived. */
export interface RouteDoc {
  summary: string;
  description?: string;
  security?: readonly Record<string, readonly string[]>[];
  /** Header parameters (query parameters come from the route's `query` schema). */
  parameters?: readonly object[];
  /** Path parameters the route checks itself, described at the path's level. */
  pathParameters?: readonly object[];
  /** For a route without a body schema whose body is described, not constrained. */
  requestBody?: object;
  responses: Record<string, object>;
}

export interface Route<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  P extends ParamSchemas | undefined = ParamSchemas | undefined,
  Q extends QuerySchema | undefined = QuerySchema | undefined,
> {
  method: Method;
  /** The path in OpenAPI's form: `{name}` for a parameter. */
  path: string;
  /** What the document says of it; false for a route the document leaves out (pages, CORS preflights). */
  doc: RouteDoc | false;
  /** The request body's schema: read and checked (readBody) before the handler runs. */
  body?: B;
  /** Media types the body may come as; JSON unless said. */
  bodyTypes?: readonly ('json' | 'form')[];
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

/** The OpenAPI `paths` object of the documented routes: one operation per route, in table order. */
export function documentPaths(routes: readonly Route[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    if (spec.doc === false) continue;
    const item = paths[spec.path] ?? {};
    paths[spec.path] = item;
    if (spec.params) {
      item.parameters = Object.entries(spec.params).map(([name, schema]) => pathParameter(name, schema));
    }
    const { summary, description, security, parameters, pathParameters, requestBody, responses } = spec.doc;
    if (pathParameters) item.parameters = pathParameters;
    const op: Record<string, unknown> = { summary };
    if (description !== undefined) op.description = description;
    if (security !== undefined) op.security = security;
    const all = [...(spec.query ? queryParameters(spec.query) : []), ...(parameters ?? [])];
    if (all.length > 0) op.parameters = all;
    if (requestBody !== undefined) op.requestBody = requestBody;
    if (spec.body) {
      const schema = requestSchema(spec.body);
      const content = Object.fromEntries(
        (spec.bodyTypes ?? ['json']).map((type) => [
          type === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
          { schema },
        ]),
      );
      op.requestBody = { required: !spec.bodyOptional, content };
    }
    op.responses = responses;
    item[spec.method] = op;
  }
  return paths;
}

/** The query parameters a query schema reads, each described by its property's JSON Schema. */
function queryParameters(query: QuerySchema): object[] {
  const schema = requestSchema(query) as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string };
    return {
      name,
      in: 'query',
      required: (schema.required ?? []).includes(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}
