import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { GatehouseError } from '@gatehouse/core/errors';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errors } from '../answers.ts';
import type { Deps } from '../deps.ts';
import { type Route, route } from '../route-table.ts';
import { contentEtag } from './pages.ts';

/**
 * GET /widget/:file serves the web widget (`sdk/web`'s build output): `gatehouse.js`, the loader pages
 * include with `<script src="{API}/widget/gatehouse.js">`, and the hashed files it loads beside itself.
 * `sdk/web/dist` is served when it is newer than its sources; otherwise (missing or stale) the widget is
 * built once per process (`ensureWidget`) into a private temporary folder and served from memory, so two
 * servers starting together never write over each other's files. The loader served here starts with one
 * statement naming this deployment's standby hosts (`withStandbyConfig`), so the widget knows where to
 * fail over without any integrator setting.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const WIDGET_DIR = join(repoRoot, 'sdk/web/dist');
/**
 * Exactly the names buildWidget writes: the loader, the vendor-compatibility loader and the content-hashed
 * UI, worker and language-pack files.
 */
const FILE = /^gatehouse(-compat|-(ui|pow|i18n)\.[\w-]+)?\.js$/;
/** The loaders named in gatehouse.js's config prelude, revalidated (they name the hashed files). */
const LOADERS = new Set(['gatehouse.js', 'gatehouse-compat.js']);
/**
 * The vendors' script paths (docs/migrating.md): their script names serve gatehouse-compat.js, which picks
 * the vendor's globals by its path, and the hashed files it loads beside itself are served there too.
 */
const COMPAT_SCRIPTS: Record<string, string[]> = {
  '/turnstile/v0': ['api.js'],
  '/recaptcha': ['api.js', 'enterprise.js'],
  '/hcaptcha/1': ['api.js'],
};
/** What the build reads: the widget's sources and the core modules it bundles. */
const SOURCES = [
  join(repoRoot, 'sdk/web/src'),
  join(repoRoot, 'sdk/web/build.ts'),
  join(repoRoot, 'core/src'),
];

/** A widget file in memory with its precompressed forms; each form has its own ETag. */
export interface Served {
  body: Buffer;
  etag: string;
  br: Buffer;
  gzip: Buffer;
}

/**
 * A file's served forms. The build writes `<file>.br` and `<file>.gz` beside each file (sdk/web/build.ts);
 * a form missing there (or a body made here, the loader with its standby prelude) is compressed now, once
 * per process, never per request.
 */
export function served(body: Buffer, path?: string): Served {
  // A form from another build (a rebuild running beside this server) is recognised and made again.
  const read = (ext: string, decompress: (b: Buffer) => Buffer) => {
    if (!path || !existsSync(`${path}${ext}`)) return undefined;
    const packed = readFileSync(`${path}${ext}`);
    return decompress(packed).equals(body) ? packed : undefined;
  };
  return {
    body,
    etag: contentEtag(body),
    br:
      read('.br', brotliDecompressSync) ??
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    gzip: read('.gz', gunzipSync) ?? gzipSync(body, { level: 9 }),
  };
}

type Encoding = 'br' | 'gzip' | 'identity';

/**
 * The best encoding an Accept-Encoding header allows: brotli over gzip over none, unless the q-values
 * rank them otherwise (browsers list gzip first with equal q, so the header's order is not a preference).
 */
export function chooseEncoding(header: string | undefined): Encoding {
  const q = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const given = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = given ? Number(given.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (name: string) => q.get(name) ?? q.get('*') ?? 0;
  const br = of('br');
  const gzip = of('gzip');
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return 'identity';
}

let ready: Promise<Map<string, Served>> | undefined;

/** Builds the widget if its output is missing or stale, then loads it; once per process, retried after a failure. */
export function ensureWidget(logger?: Logger): Promise<Map<string, Served>> {
  ready ??= prepare(logger).catch((error) => {
    ready = undefined;
    throw error;
  });
  return ready;
}

async function prepare(logger: Logger | undefined): Promise<Map<string, Served>> {
  const built = newestMtime([join(WIDGET_DIR, 'gatehouse.js')]);
  if (built > 0 && newestMtime(SOURCES) <= built) {
    const files = load(WIDGET_DIR);
    // A build running in another process right now may leave a loader naming files not written yet.
    if (complete(files)) return files;
  }
  let buildWidget: (options: { outDir?: string }) => Promise<unknown>;
  try {
    ({ buildWidget } = await import('@gatehouse/web/build'));
  } catch (error) {
    // Without esbuild (a production install) a stale build is still served; a missing one cannot be.
    if (built > 0) {
      logger?.warn({ err: error }, 'widget sources changed but the widget cannot be rebuilt here');
      return load(WIDGET_DIR);
    }
    throw new Error(`The web widget is not built and cannot be built here (${(error as Error).message}).`);
  }
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-widget-'));
  try {
    const started = Date.now();
    await buildWidget({ outDir });
    logger?.info(
      { ms: Date.now() - started },
      built
        ? 'web widget rebuilt: its sources changed since the last build'
        : 'web widget built from its sources (first start of this checkout)',
    );
    return load(outDir);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

function load(dir: string): Map<string, Served> {
  const files = new Map<string, Served>();
  for (const name of readdirSync(dir)) {
    if (!FILE.test(name)) continue;
    files.set(name, served(readFileSync(join(dir, name)), join(dir, name)));
  }
  if (!files.has('gatehouse.js')) throw new Error(`${dir} holds no gatehouse.js.`);
  return files;
}

/** Whether every hashed file the loader names is there. */
function complete(files: Map<string, Served>): boolean {
  const named =
    files
      .get('gatehouse.js')!
      .body.toString('utf8')
      .match(/gatehouse-(ui|pow|i18n)\.[\w-]+\.js/g) ?? [];
  return named.length > 0 && named.every((name) => files.has(name));
}

/** The latest modification time of any file under these paths; 0 when none exists. */
function newestMtime(paths: string[]): number {
  let newest = 0;
  for (const path of paths) {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) {
      const children = readdirSync(path).map((child) => join(path, child));
      newest = Math.max(newest, newestMtime(children));
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  }
  return newest;
}

/**
 * The global the widget reads its served configuration from (sdk/web/src/standby-hosts.ts, CONFIG_GLOBAL:
 * the two must agree; the widget's failover browser test loads this route's loader).
 */
export const WIDGET_CONFIG_GLOBAL = '__gatehouseConfig1';

/**
 * The loader with a first statement naming the deployment's standby (bypass) hosts; unchanged when there
 * are none. The JSON is escaped so that it cannot end a script element.
 */
export function withStandbyConfig<T extends Pick<Served, 'body'>>(
  loader: T,
  bypassUrls: string[],
): T | Served {
  if (bypassUrls.length === 0) return loader;
  const json = JSON.stringify({ bypass: bypassUrls }).replace(/</g, '\\u003c');
  return served(Buffer.concat([Buffer.from(`window.${WIDGET_CONFIG_GLOBAL}=${json};\n`), loader.body]));
}

/** Serves the widget's files for one app's dependencies (the loader with its standby configuration). */
function widgetServer(deps: Deps): (ctx: Context, name: string) => Promise<void> {
  const configured = new WeakMap<Served, Served>();
  return serve;

  async function serve(ctx: Context, name: string): Promise<void> {
    let files: Map<string, Served>;
    try {
      files = await ensureWidget(deps.logger);
    } catch (error) {
      deps.logger.error({ err: error }, 'web widget unavailable');
      throw new GatehouseError('service_unavailable', 'The web widget is not available on this server.');
    }
    let file = files.get(name);
    if (!file) throw new GatehouseError('not_found', 'No such widget file.');
    if (LOADERS.has(name)) {
      const raw = file;
      file = configured.get(raw) ?? withStandbyConfig(raw, deps.config.standby.bypassUrls);
      configured.set(raw, file);
    }
    ctx.type = 'application/javascript; charset=utf-8';
    // The loader names the hashed files, so it must be revalidated; the hashed files never change.
    ctx.set(
      'Cache-Control',
      LOADERS.has(name)
        ? 'public, max-age=300, stale-while-revalidate=3600'
        : 'public, max-age=31536000, immutable',
    );
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // One representation per encoding, each with its own strong ETag; caches key them on Accept-Encoding.
    ctx.set('Vary', 'Accept-Encoding');
    const encoding = chooseEncoding(ctx.get('Accept-Encoding') || undefined);
    const etag = encoding === 'identity' ? file.etag : `${file.etag.slice(0, -1)}-${encoding}"`;
    ctx.set('ETag', etag);
    const match = ctx.get('If-None-Match');
    if (match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      ctx.status = 304;
      return;
    }
    if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
    ctx.body = encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : file.body;
  }
}

const servers = new WeakMap<Deps, (ctx: Context, name: string) => Promise<void>>();
const serverOf = (deps: Deps) => {
  let serve = servers.get(deps);
  if (!serve) {
    serve = widgetServer(deps);
    servers.set(deps, serve);
  }
  return serve;
};

export const widgetRoutes: Route[] = [
  route({
    method: 'get',
    path: '/widget/{file}',
    doc: () => ({
      summary: 'The web widget: gatehouse.js (loader) and its lazily loaded chunks',
      pathParameters: { file: z.string() },
      responses: {
        '200': {
          description: 'JavaScript',
          content: { 'application/javascript': z.string() },
        },
        ...errors('not_found'),
      },
    }),
    handler: ({ deps }) => {
      const serve = serverOf(deps);
      return async function widget(ctx) {
        const name = ctx.params.file ?? '';
        if (!FILE.test(name)) throw new GatehouseError('not_found', 'No such widget file.');
        await serve(ctx, name);
      };
    },
  }),
  ...Object.entries(COMPAT_SCRIPTS).map(([prefix, scripts]) =>
    route({
      method: 'get',
      path: `${prefix}/{file}`,
      doc: false,
      handler: ({ deps }) => {
        const serve = serverOf(deps);
        return function compatScript(ctx, _input, next) {
          const file = ctx.params.file ?? '';
          if (scripts.includes(file)) return serve(ctx, 'gatehouse-compat.js');
          if (FILE.test(file) && !LOADERS.has(file)) return serve(ctx, file);
          return next();
        };
      },
    }),
  ),
];
