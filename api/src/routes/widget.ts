import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatehouseError } from '@gatehouse/core/errors';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Deps } from '../deps.ts';

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
 * UI and worker files.
 */
const FILE = /^gatehouse(-compat|-(ui|pow)\.[\w-]+)?\.js$/;
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

export interface Served {
  body: Buffer;
  etag: string;
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
      `web widget built (${WIDGET_DIR} is ${built ? 'stale' : 'missing'})`,
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
    const body = readFileSync(join(dir, name));
    files.set(name, {
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    });
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
      .match(/gatehouse-(ui|pow)\.[\w-]+\.js/g) ?? [];
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
export function withStandbyConfig(loader: Served, bypassUrls: string[]): Served {
  if (bypassUrls.length === 0) return loader;
  const json = JSON.stringify({ bypass: bypassUrls }).replace(/</g, '\\u003c');
  const body = Buffer.concat([Buffer.from(`window.${WIDGET_CONFIG_GLOBAL}=${json};\n`), loader.body]);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function widgetRoutes(router: Router, deps: Deps): void {
  const configured = new WeakMap<Served, Served>();
  router.get('/widget/:file', async function widget(ctx) {
    const name = ctx.params.file ?? '';
    if (!FILE.test(name)) throw new GatehouseError('not_found', 'No such widget file.');
    await serve(ctx, name);
  });
  for (const [prefix, scripts] of Object.entries(COMPAT_SCRIPTS)) {
    router.get(`${prefix}/:file`, async function compatScript(ctx, next) {
      const file = ctx.params.file ?? '';
      if (scripts.includes(file)) return serve(ctx, 'gatehouse-compat.js');
      if (FILE.test(file) && !LOADERS.has(file)) return serve(ctx, file);
      return next();
    });
  }

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
      LOADERS.has(name) ? 'public, max-age=300' : 'public, max-age=31536000, immutable',
    );
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('ETag', file.etag);
    if (ctx.get('If-None-Match') === file.etag) {
      ctx.status = 304;
      return;
    }
    ctx.body = file.body;
  }
}
