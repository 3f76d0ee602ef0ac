import { GatehouseError } from '@gatehouse/core/errors';
import type { Context } from 'koa';
import type { ConsoleSession, ConsoleSessions } from './sessions.ts';

/**
 * The console session's cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * makes the browser send it), Path=/. Over HTTPS it is Secure and named with the `__Host-` prefix, which
 * the browser accepts only when Secure, Path=/ and without Domain, so a sibling subdomain cannot plant or
 * shadow it. HTTPS is what the connection says, or, behind a proxy that ends TLS, what the browser says
 * of the page in `Origin` (a page cannot forge its own origin).
 */
export const SECURE_COOKIE = '__Host-gatehouse_console';
export const PLAIN_COOKIE = 'gatehouse_console';
/** The header a state-changing request signed in by cookie must carry (the session's CSRF token). */
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session id the request's cookie holds, if any. */
export function sessionCookie(ctx: Context): string | undefined {
  return ctx.cookies.get(SECURE_COOKIE) ?? ctx.cookies.get(PLAIN_COOKIE);
}

function overHttps(ctx: Context): boolean {
  return ctx.secure || /^https:\/\//i.test(ctx.get('Origin'));
}

export function setSessionCookie(ctx: Context, session: ConsoleSession, maxAgeSeconds: number): void {
  const secure = overHttps(ctx);
  // The cookie library refuses a Secure cookie on a connection it believes plain (TLS ended at a proxy).
  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
  ctx.cookies.set(secure ? SECURE_COOKIE : PLAIN_COOKIE, session.id, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: maxAgeSeconds * 1000,
    overwrite: true,
  });
}

/** Tells the browser to drop whichever session cookie it sent. */
export function clearSessionCookie(ctx: Context): void {
  for (const name of [SECURE_COOKIE, PLAIN_COOKIE]) {
    if (ctx.cookies.get(name) === undefined) continue;
    const secure = name === SECURE_COOKIE;
    if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
    ctx.cookies.set(name, '', {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: '/',
      expires: new Date(0),
      overwrite: true,
    });
  }
}

/**
 * Authenticates a request by its console session cookie: the session must be live, and a request that
 * changes state must carry the session's CSRF token in X-CSRF-Token. Throws `unauthorized` otherwise,
 * which the authentication throttle counts like a wrong admin token.
 */
export async function requireConsoleSession(
  ctx: Context,
  sessions: ConsoleSessions,
  id: string,
): Promise<ConsoleSession> {
  const session = await sessions.find(id);
  if (!session) {
    throw new GatehouseError(
      'unauthorized',
      'The console session has ended (signed out, expired or the admin token changed): sign in again.',
    );
  }
  if (!SAFE_METHODS.has(ctx.method) && !sessions.csrfMatches(id, ctx.get(CSRF_HEADER))) {
    throw new GatehouseError(
      'unauthorized',
      `A request signed in by the console's cookie must carry its ${CSRF_HEADER} header.`,
    );
  }
  return session;
}
