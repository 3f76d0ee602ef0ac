import { constantTimeEqual, sha256Hex } from '@gatehouse/core/crypto';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { parseOrThrow, readBody } from '@gatehouse/core/http';
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { describeApp } from '../apps/repository.ts';
import { appSettingsPatch, createAppBody } from '../apps/settings.ts';
import { requireConsoleSession, sessionCookie } from '../console/session-cookie.ts';
import type { ConsoleSessions } from '../console/sessions.ts';
import type { Deps } from '../deps.ts';

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

/** Admin API for the `gatehouse` command and the operator: apps and their secrets, behind a bearer token. */
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
  cursor: cursor.optional(),
});

export function adminRoutes(router: Router, deps: Deps): void {
  const guard = requireAdmin(deps.adminToken, deps.consoleSessions);
  const key = (raw: string | undefined) =>
    parseOrThrow(z.object({ appKey: appKeyParam }), { appKey: raw }).appKey;

  router.get('/admin/v1/apps', guard, async function listApps(ctx) {
    const { limit, cursor } = parseOrThrow(listAppsQuery, ctx.query);
    const page = await deps.apps.page(limit, cursor);
    if (!page)
      throw new GatehouseError('invalid_request', 'cursor: must be a next_cursor from a previous page');
    ctx.body = success({
      apps: page.apps.map(describeApp),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    });
  });
  router.post('/admin/v1/apps', guard, async function createApp(ctx) {
    const settings = readBody(ctx, createAppBody);
    const { app, secret } = await deps.apps.create(settings);
    ctx.status = 201;
    ctx.body = success({ ...describeApp(app), app_secret: secret });
  });
  router.get('/admin/v1/apps/:appKey', guard, async function getApp(ctx) {
    ctx.body = success(describeApp(await deps.apps.require(key(ctx.params.appKey))));
  });
  router.patch('/admin/v1/apps/:appKey', guard, async function updateApp(ctx) {
    const patch = readBody(ctx, appSettingsPatch);
    ctx.body = success(describeApp(await deps.apps.update(key(ctx.params.appKey), patch)));
  });
  router.post('/admin/v1/apps/:appKey/rotate-secret', guard, async function rotateSecret(ctx) {
    // A chunked body has no Content-Length: ignoring it would silently apply the default grace.
    const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    const { grace_seconds } = hasBody ? readBody(ctx, rotateBody) : rotateBody.parse({});
    const { app, secret } = await deps.apps.rotateSecret(key(ctx.params.appKey), grace_seconds);
    ctx.body = success({ ...describeApp(app), app_secret: secret });
  });
  router.post('/admin/v1/apps/:appKey/rotate-key', guard, async function rotateKey(ctx) {
    const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    const { grace_seconds } = hasBody ? readBody(ctx, rotateBody) : rotateBody.parse({});
    ctx.body = success(describeApp(await deps.apps.rotateKey(key(ctx.params.appKey), grace_seconds)));
  });
  router.post('/admin/v1/apps/:appKey/disable', guard, async function disableApp(ctx) {
    ctx.body = success(describeApp(await deps.apps.setDisabled(key(ctx.params.appKey), true)));
  });
  router.post('/admin/v1/apps/:appKey/enable', guard, async function enableApp(ctx) {
    ctx.body = success(describeApp(await deps.apps.setDisabled(key(ctx.params.appKey), false)));
  });
}

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
