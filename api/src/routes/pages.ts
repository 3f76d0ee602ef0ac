import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/**
 * The few HTML pages the API serves (the root page, the API reference, the console) share these rules:
 * a strict Content-Security-Policy with no inline script, never framed, no referrer, no sniffing.
 */
export interface PagePolicy {
  /** Extra sources per directive, beyond 'self' for scripts, styles, images and fetches. */
  styleHashes?: string[];
  imgData?: boolean;
}

/** The CSP of one page: only this origin's files; inline styles only by hash. */
export function contentSecurityPolicy(policy: PagePolicy = {}): string {
  const styles = ["'self'", ...(policy.styleHashes ?? []).map((h) => `'${h}'`)].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${styles}`,
    `img-src 'self'${policy.imgData ? ' data:' : ''}`,
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The hash a CSP names to allow one inline <style> element. */
export function styleHash(css: string): string {
  return `sha256-${createHash('sha256').update(css).digest('base64')}`;
}

/** Answers an HTML page with the shared security headers. */
export function sendPage(ctx: Context, html: string, policy: PagePolicy = {}): void {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', contentSecurityPolicy(policy));
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = html;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
