import { GatehouseError, success } from '@gatehouse/core/errors';
import type { Context } from 'koa';
import { z } from 'zod';
import { bodyErrors, dateTime, errors, ok } from '../answers.ts';
import { type Route, route } from '../route-table.ts';
import { isAdminToken } from '../routes/admin.ts';
import {
  clearSessionCookie,
  requireConsoleSession,
  sessionCookie,
  setSessionCookie,
} from './session-cookie.ts';
import type { ConsoleSession } from './sessions.ts';

export const signInBody = z.object({ admin_token: z.string().max(1024) }).strict();

const session = z.strictObject({
  csrf_token: z.string(),
  expires_at: dateTime.meta({ description: 'The end, whatever the activity' }),
  idle_expires_at: dateTime.meta({
    description: 'The end if no request comes before (each request moves it)',
  }),
});

const noStore = (ctx: Context) => ctx.set('Cache-Control', 'no-store');

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
export const consoleSessionRoutes: Route[] = [
  route({
    method: 'post',
    path: '/admin/v1/session',
    doc: () => ({
      summary: "The console's sign-in: exchanges the admin token for a session cookie",
      description:
        "Sets an HttpOnly, SameSite=Strict cookie (`__Host-gatehouse_console`, Secure, over HTTPS; `gatehouse_console` over plain HTTP) that the admin API accepts in place of the bearer token. A request signed in by the cookie that changes something must carry the session's `csrf_token` in `X-CSRF-Token`. The session ends at sign-out, after 30 minutes without a request, 12 hours after sign-in, or when the admin token changes. A wrong token counts as a failed admin authentication.",
      security: [],
      responses: {
        '201': { description: 'Signed in', json: ok(session) },
        ...errors(...bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    body: signInBody,
    handler: ({ deps }) =>
      async function signIn(ctx, { body: { admin_token } }) {
        const sessions = deps.consoleSessions;
        if (!isAdminToken(admin_token, deps.adminToken)) throw new GatehouseError('unauthorized');
        // A new id at every sign-in: a cookie planted before it never becomes a signed-in session.
        const previous = sessionCookie(ctx);
        if (previous !== undefined) await sessions.revoke(previous);
        const session = await sessions.open();
        setSessionCookie(ctx, session, sessions.limits.absoluteSeconds);
        noStore(ctx);
        ctx.status = 201;
        return success(describe(session));
      },
  }),
  route({
    method: 'get',
    path: '/admin/v1/session',
    doc: () => ({
      summary: "The cookie's console session, with its CSRF token (401 when there is none or it ended)",
      security: [],
      responses: {
        '200': { description: 'Signed in', json: ok(session) },
        ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    handler: ({ deps }) =>
      async function currentSession(ctx) {
        const id = sessionCookie(ctx);
        if (id === undefined) throw new GatehouseError('unauthorized', ENDED);
        const session = await requireConsoleSession(ctx, deps.consoleSessions, id);
        noStore(ctx);
        return success(describe(session));
      },
  }),
  route({
    method: 'delete',
    path: '/admin/v1/session',
    doc: () => ({
      summary: "Signs the console out: the cookie's session ends on every instance (needs X-CSRF-Token)",
      security: [],
      headers: { 'X-CSRF-Token': z.string().meta({ description: 'The csrf_token of the session' }) },
      responses: {
        '200': {
          description: 'Signed out',
          json: ok(z.strictObject({ signed_out: z.literal(true) })),
        },
        ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    handler: ({ deps }) =>
      async function signOut(ctx) {
        const id = sessionCookie(ctx);
        if (id === undefined) throw new GatehouseError('unauthorized', ENDED);
        await requireConsoleSession(ctx, deps.consoleSessions, id);
        await deps.consoleSessions.revoke(id);
        clearSessionCookie(ctx);
        noStore(ctx);
        return success({ signed_out: true });
      },
  }),
];
