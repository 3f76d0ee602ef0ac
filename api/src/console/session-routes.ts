import { GatehouseError, success } from '@gatehouse/core/errors';
import { readBody } from '@gatehouse/core/http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { isAdminToken } from '../routes/admin.ts';
import {
  clearSessionCookie,
  requireConsoleSession,
  sessionCookie,
  setSessionCookie,
} from './session-cookie.ts';
import type { ConsoleSession } from './sessions.ts';

export const signInBody = z.object({ admin_token: z.string().max(1024) }).strict();

const ENDED = 'No console session: sign in with the admin token.';

function describe(session: ConsoleSession) {
  return {
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt.toISOString(),
    idle_expires_at: session.idleExpiresAt.toISOString(),
  };
}

/**
 * The console's sign-in: POST exchanges the admin token for a session cookie (the only request that
 * carries the token; a wrong one is refused and counted by the authentication throttle like any wrong
 * admin token, the path being under /admin/), GET says whether the cookie's session is live and gives
 * the page its CSRF token again after a reload, DELETE signs out (the session ends on every instance).
 */
export function consoleSessionRoutes(router: Router, deps: Deps): void {
  const sessions = deps.consoleSessions;
  const noStore = (ctx: Context) => ctx.set('Cache-Control', 'no-store');

  router.post('/admin/v1/session', async function signIn(ctx) {
    const { admin_token } = readBody(ctx, signInBody);
    if (!isAdminToken(admin_token, deps.adminToken)) throw new GatehouseError('unauthorized');
    // A new id at every sign-in: a cookie planted before it never becomes a signed-in session.
    const previous = sessionCookie(ctx);
    if (previous !== undefined) await sessions.revoke(previous);
    const session = await sessions.open();
    setSessionCookie(ctx, session, sessions.limits.absoluteSeconds);
    noStore(ctx);
    ctx.status = 201;
    ctx.body = success(describe(session));
  });

  router.get('/admin/v1/session', async function currentSession(ctx) {
    const id = sessionCookie(ctx);
    if (id === undefined) throw new GatehouseError('unauthorized', ENDED);
    const session = await requireConsoleSession(ctx, sessions, id);
    noStore(ctx);
    ctx.body = success(describe(session));
  });

  router.delete('/admin/v1/session', async function signOut(ctx) {
    const id = sessionCookie(ctx);
    if (id === undefined) throw new GatehouseError('unauthorized', ENDED);
    await requireConsoleSession(ctx, sessions, id);
    await sessions.revoke(id);
    clearSessionCookie(ctx);
    noStore(ctx);
    ctx.body = success({ signed_out: true });
  });
}
