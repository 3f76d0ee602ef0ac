import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Context } from 'koa';

/**
 * The web widget's files as the main API serves them: the loader (with the deployment's
 * standby list in its first statement), the vendor-compatibility loader, and the content-hashed UI,
 * proof-of-work worker and language pack the loader names. The standby copies them from the main API
 * while it is up and serves the same bytes at the same paths (`/widget/<file>`), so a page whose main API
 * is down still loads its widget, and the loader finds its chunks here (their SRI hashes match: same
 * bytes). Kept on disk (STANDBY_DATA_DIR/widget), so a standby restarted during an outage still serves.
 * A copy, not a build: the standby image holds no widget sources and no bundler, and the files can never
 * differ from the main API's.
 */

/** The names the main API serves under /widget/ (api/src/routes/widget.ts's FILE). */
export const WIDGET_FILE = /^gatehouse(-compat|-(ui|pow|i18n)\.[\w-]+)?\.js$/;
const LOADERS = ['gatehouse.js', 'gatehouse-compat.js'];
const CHUNK = /gatehouse-(ui|pow|i18n)\.[\w-]+\.js/g;

interface Held {
  body: Buffer;
  br: Buffer;
  gzip: Buffer;
  etag: string;
}

function hold(body: Buffer): Held {
  return {
    body,
    br: brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

export class WidgetMirror {
  readonly #dir: string;
  readonly #source: string;
  #files = new Map<string, Held>();
  #refreshedAt: Date | null = null;

  /** `source`: the main API's public base URL; `dir`: where the copy is kept. */
  constructor(source: string, dir: string) {
    this.#source = source.replace(/\/+$/, '');
    this.#dir = dir;
  }

  /** Loads the copy kept on disk; false when there is none (or it is incomplete). */
  loadFromDisk(): boolean {
    let names: string[];
    try {
      names = readdirSync(this.#dir).filter((n) => WIDGET_FILE.test(n));
    } catch {
      return false;
    }
    const files = new Map(names.map((n) => [n, hold(readFileSync(join(this.#dir, n)))] as const));
    if (!complete(files)) return false;
    this.#files = files;
    return true;
  }

  /**
   * Copies the main API's current widget: both loaders, then every chunk they name not held yet. The new
   * set replaces the old one only when complete (never a loader naming a chunk this standby lacks).
   */
  async refresh(timeoutMs = 10_000): Promise<void> {
    const get = async (name: string) => {
      // The user agent the main API's request log knows as a copy in sync (core's SYNC_USER_AGENT).
      const res = await fetch(`${this.#source}/widget/${name}`, {
        headers: { 'user-agent': 'gatehouse-standby (widget copy)' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`widget copy: ${name} answered HTTP ${res.status}`);
      return Buffer.from(await res.arrayBuffer());
    };
    const next = new Map<string, Held>();
    for (const name of LOADERS) {
      const body = await get(name).catch((error) => {
        if (name === 'gatehouse.js') throw error;
        return undefined;
      });
      if (body)
        next.set(name, this.#files.get(name)?.body.equals(body) ? this.#files.get(name)! : hold(body));
    }
    const named = new Set<string>();
    for (const name of LOADERS)
      for (const chunk of next.get(name)?.body.toString('utf8').match(CHUNK) ?? []) named.add(chunk);
    for (const chunk of named) next.set(chunk, this.#files.get(chunk) ?? hold(await get(chunk)));
    if (!complete(next)) throw new Error('widget copy: the loader names files the main API did not serve');
    this.#files = next;
    this.#refreshedAt = new Date();
    this.#persist();
  }

  #persist(): void {
    mkdirSync(this.#dir, { recursive: true });
    for (const [name, file] of this.#files) {
      const path = join(this.#dir, name);
      writeFileSync(`${path}.tmp`, file.body);
      renameSync(`${path}.tmp`, path);
    }
    for (const name of readdirSync(this.#dir)) {
      if (WIDGET_FILE.test(name) && !this.#files.has(name)) rmSync(join(this.#dir, name), { force: true });
    }
  }

  status(): { files: number; refreshed_at: string | null } {
    return { files: this.#files.size, refreshed_at: this.#refreshedAt?.toISOString() ?? null };
  }

  /** GET /widget/:file with the main API's headers (CORS open: the loader checks the chunks' SRI hashes). */
  serve(ctx: Context, name: string): boolean {
    const file = WIDGET_FILE.test(name) ? this.#files.get(name) : undefined;
    if (!file) return false;
    const loader = LOADERS.includes(name);
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set(
      'Cache-Control',
      loader ? 'public, max-age=300, stale-while-revalidate=3600' : 'public, max-age=31536000, immutable',
    );
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Vary', 'Accept-Encoding');
    const accept = ctx.get('Accept-Encoding');
    const encoding = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : 'identity';
    const etag = encoding === 'identity' ? file.etag : `${file.etag.slice(0, -1)}-${encoding}"`;
    ctx.set('ETag', etag);
    if (
      ctx
        .get('If-None-Match')
        .split(',')
        .some((tag) => tag.trim().replace(/^W\//, '') === etag)
    ) {
      ctx.status = 304;
      return true;
    }
    if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
    ctx.body = encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : file.body;
    return true;
  }
}

/** The loader is there and every chunk a loader names is too. */
function complete(files: Map<string, Held>): boolean {
  if (!files.has('gatehouse.js')) return false;
  return LOADERS.every((name) =>
    (files.get(name)?.body.toString('utf8').match(CHUNK) ?? []).every((chunk) => files.has(chunk)),
  );
}
