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

/** A file the API holds in memory and serves as it is (console and API reference assets). */
export interface MemoryFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** A strong ETag from the content, the same for every process serving the same bytes. */
export function contentEtag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** A file held in memory, with its content's ETag. */
export function memoryFile(body: Buffer | string, type: string): MemoryFile {
  const buffer = Buffer.from(body);
  return { body: buffer, type, etag: contentEtag(buffer) };
}

/** Answers a file held in memory, or 304 when the client already holds this version. */
export function sendMemoryFile(ctx: Context, file: MemoryFile, cacheControl: string): void {
  ctx.set('ETag', file.etag);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (ctx.get('If-None-Match') === file.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  ctx.body = file.body;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
