import { constantTimeEqual, sha256Hex } from '@gatehouse/core/crypto';
import { type ErrorCode, GatehouseError, success } from '@gatehouse/core/errors';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { adminAuth, appView, bodyErrors, errors, ok } from '../answers.ts';
import { describeApp } from '../apps/repository.ts';
import { appSettingsPatch, createAppBody } from '../apps/settings.ts';
import { requireConsoleSession, sessionCookie } from '../console/session-cookie.ts';
import type { ConsoleSessions } from '../console/sessions.ts';
import { type Route, type RouteServices, route } from '../route-table.ts';

/** Body of POST .../rotate-secret and .../rotate-key; also used by the `gatehouse` command when it opens the database itself. */
export const rotateBody = z
  .object({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(86_400),
  })
  .strict();
export const appKeyParam = z.string().regex(/^ak_[A-Za-z0-9_-]{1,64}$/, 'not an app key');

/** Apps per page of `GET /admin/v1/apps`: the default, and the most one request may ask for. */
export const APP_PAGE = { default: 100, max: 500 } as const;

/** A page's position: the id of the last app it showed, opaque to clients. */
const encodeCursor = (app: { id: string }) => Buffer.from(app.id).toString('base64url');

const cursor = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor from a previous page')
  .transform((value) => Buffer.from(value, 'base64url').toString('utf8'));

const listAppsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(APP_PAGE.max).default(APP_PAGE.default),
  cursor: cursor.optional().meta({ description: 'The next_cursor of the previous page' }),
});

/**
 * Where an app's answer leads (OpenAPI links): every operation on the app its `app_key` names. A client
 * generator or a stateful fuzzer follows them from a create (or a key rotation) to the rest of the app's
 * life.
 */
const appLinks = Object.fromEntries(
  (
    [
      ['GetApp', '/admin/v1/apps/{appKey}', 'get'],
      ['UpdateApp', '/admin/v1/apps/{appKey}', 'patch'],
      ['RotateSecret', '/admin/v1/apps/{appKey}/rotate-secret', 'post'],
      ['RotateKey', '/admin/v1/apps/{appKey}/rotate-key', 'post'],
      ['DisableApp', '/admin/v1/apps/{appKey}/disable', 'post'],
      ['EnableApp', '/admin/v1/apps/{appKey}/enable', 'post'],
    ] as const
  ).map(([name, path, method]) => [
    name,
    {
      // A JSON pointer in a URI fragment: `~` and `/` escaped (RFC 6901), then braces percent-encoded.
      operationRef: `#/paths/${encodeURIComponent(path.replaceAll('~', '~0').replaceAll('/', '~1'))}/${method}`,
      parameters: { appKey: '$response.body#/data/app_key' },
    },
  ]),
);

/** The admin guard as a route's middleware. */
export const adminGuard = ({ deps }: RouteServices) => [requireAdmin(deps.adminToken, deps.consoleSessions)];

const appKeyParams = { appKey: appKeyParam };
const appErrors = (...codes: ErrorCode[]) =>
  errors(...codes, 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited');

/** Admin API for the `gatehouse` command and the operator: apps and their secrets, behind a bearer token. */
export const adminRoutes: Route[] = [
  route({
    method: 'get',
    path: '/admin/v1/apps',
    doc: () => ({
      summary: 'List apps, a page at a time in creation order; follow next_cursor until it is null',
      security: adminAuth,
      responses: {
        '200': {
          description: 'One page of apps',
          json: ok(z.strictObject({ apps: z.array(appView), next_cursor: z.string().nullable() })),
        },
        ...errors('invalid_request', 'unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    query: listAppsQuery,
    use: adminGuard,
    handler: ({ deps }) =>
      async function listApps(_ctx, { query: { limit, cursor } }) {
        const page = await deps.apps.page(limit, cursor);
        if (!page)
          throw new GatehouseError('invalid_request', 'cursor: must be a next_cursor from a previous page');
        return success({
          apps: page.apps.map(describeApp),
          next_cursor: page.next ? encodeCursor(page.next) : null,
        });
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/apps',
    doc: () => ({
      summary: 'Create an app; the answer is the only time its secret is shown',
      security: adminAuth,
      responses: {
        '201': { description: 'Created', json: ok(appView), links: appLinks },
        ...errors(...bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    body: createAppBody,
    use: adminGuard,
    handler: ({ deps }) =>
      async function createApp(ctx, { body }) {
        const { app, secret } = await deps.apps.create(body);
        ctx.status = 201;
        return success({ ...describeApp(app), app_secret: secret });
      },
  }),
  route({
    method: 'get',
    path: '/admin/v1/apps/{appKey}',
    doc: () => ({
      summary: 'One app',
      security: adminAuth,
      responses: { '200': { description: 'The app', json: ok(appView) }, ...appErrors('invalid_request') },
    }),
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function getApp(_ctx, { params }) {
        return success(describeApp(await deps.apps.require(params.appKey)));
      },
  }),
  route({
    method: 'patch',
    path: '/admin/v1/apps/{appKey}',
    doc: () => ({
      summary: 'Change settings',
      security: adminAuth,
      responses: { '200': { description: 'The app', json: ok(appView) }, ...appErrors(...bodyErrors) },
    }),
    body: appSettingsPatch,
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function updateApp(_ctx, { body, params }) {
        return success(describeApp(await deps.apps.update(params.appKey, body)));
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/apps/{appKey}/rotate-secret',
    doc: () => ({
      summary: 'New secret; the previous one keeps working for grace_seconds (default one day)',
      security: adminAuth,
      responses: {
        '200': { description: 'The app and its new secret', json: ok(appView) },
        ...appErrors(...bodyErrors),
      },
    }),
    body: rotateBody,
    bodyOptional: true,
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function rotateSecret(_ctx, { body, params }) {
        const { app, secret } = await deps.apps.rotateSecret(params.appKey, body.grace_seconds);
        return success({ ...describeApp(app), app_secret: secret });
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/apps/{appKey}/rotate-key',
    doc: () => ({
      summary:
        'New public key; the previous one keeps naming the app (widgets, validation, standby, this API) for grace_seconds (default one day). Refused for an app managed by a custom resource.',
      security: adminAuth,
      responses: {
        '200': { description: 'The app under its new key', json: ok(appView), links: appLinks },
        ...appErrors(...bodyErrors),
      },
    }),
    body: rotateBody,
    bodyOptional: true,
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function rotateKey(_ctx, { body, params }) {
        return success(describeApp(await deps.apps.rotateKey(params.appKey, body.grace_seconds)));
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/apps/{appKey}/disable',
    doc: () => ({
      summary: 'Disable an app: its credentials stop working at once',
      security: adminAuth,
      responses: { '200': { description: 'The app', json: ok(appView) }, ...appErrors('invalid_request') },
    }),
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function disableApp(_ctx, { params }) {
        return success(describeApp(await deps.apps.setDisabled(params.appKey, true)));
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/apps/{appKey}/enable',
    doc: () => ({
      summary: 'Enable a disabled app',
      security: adminAuth,
      responses: { '200': { description: 'The app', json: ok(appView) }, ...appErrors('invalid_request') },
    }),
    params: appKeyParams,
    use: adminGuard,
    handler: ({ deps }) =>
      async function enableApp(_ctx, { params }) {
        return success(describeApp(await deps.apps.setDisabled(params.appKey, false)));
      },
  }),
];

/**
 * The admin guard: the admin token as a bearer header (the CLI, the operator, scripts), or, without an
 * Authorization header, a live console session by its cookie (console/session-cookie.ts). The token is
 * compared in constant time: both sides are hashed first, so not even the length leaks.
 */
export function requireAdmin(adminToken: string, sessions?: ConsoleSessions): Middleware {
  return async function requireAdmin(ctx, next) {
    const header = ctx.get('Authorization');
    const cookie = sessions && header === '' ? sessionCookie(ctx) : undefined;
    if (sessions && cookie !== undefined) {
      await requireConsoleSession(ctx, sessions, cookie);
    } else if (!isAdminToken(header.startsWith('Bearer ') ? header.slice(7) : '', adminToken)) {
      throw new GatehouseError('unauthorized');
    }
    await next();
  };
}

export function isAdminToken(presented: string, adminToken: string): boolean {
  return presented !== '' && constantTimeEqual(sha256Hex(presented), sha256Hex(adminToken));
}
