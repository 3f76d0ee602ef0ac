/**
 * Builds the widget with esbuild into `outDir`:
 *   gatehouse.js               the loader, an IIFE for `<script src=".../gatehouse.js" async defer>`
 *   gatehouse-ui.<hash>.js     the challenge UI, loaded on demand (registers itself on a global)
 *   gatehouse-pow.<hash>.js    the proof-of-work Web Worker (core/src/pow/worker.ts with hash-wasm)
 *   gatehouse-i18n.<hash>.js   the loader's strings in languages other than English, loaded only for them
 *   gatehouse-compat.js        the loader plus the turnstile/grecaptcha/hcaptcha globals (src/compat/), which
 *                              the API serves at the vendors' script paths
 * The lazily loaded files carry a content hash, so they can be cached forever; the loader, which names
 * them, should be served with a short cache lifetime. Each file gets its brotli (`.br`, quality 11) and
 * gzip (`.gz`, level 9) forms beside it, made here once so that servers never compress per request.
 *
 * As a script: node sdk/web/build.ts [--out DIR] [--no-minify]   (default DIR: sdk/web/dist)
 */

import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = (await import('./package.json', { with: { type: 'json' } })).default as { version: string };

export interface BuiltFile {
  file: string;
  path: string;
  bytes: number;
}
export interface BuiltWidget {
  loader: BuiltFile;
  ui: BuiltFile;
  worker: BuiltFile;
  i18n: BuiltFile;
  compat: BuiltFile;
}

/** The Web Worker entry of core's proof-of-work, found through the package's public `./pow` export. */
function workerEntry(): string {
  return join(dirname(fileURLToPath(import.meta.resolve('@gatehouse/core/pow'))), 'worker.ts');
}

async function bundle(
  entry: string,
  name: string,
  outDir: string,
  minify: boolean,
  define: Record<string, string> = {},
): Promise<BuiltFile> {
  const hashed = name !== 'gatehouse' && name !== 'gatehouse-compat';
  const result = await build({
    entryPoints: { [name]: entry },
    outdir: outDir,
    entryNames: hashed ? '[name].[hash]' : '[name]',
    bundle: true,
    format: 'iife',
    platform: 'browser',
    // The browsers are the floor (they all run ES2021: class fields, ??=, ?.). Chrome 91, not 90: esbuild
    // lowers every ?. for 90 (a V8 bug fixed in 91), hundreds of bytes of the loader's 10 KB budget; an extra
    // es2020 target would lower class fields into helper calls too.
    target: ['chrome91', 'firefox90', 'safari15'],
    minify,
    legalComments: 'none',
    charset: 'utf8',
    define,
    metafile: true,
    write: true,
    logLevel: 'warning',
  });
  const [path, info] = Object.entries(result.metafile.outputs)[0] as [string, { bytes: number }];
  return { file: path.split('/').pop() as string, path: resolve(path), bytes: info.bytes };
}

/** The file's Subresource Integrity value (`sha384-…`). */
export function sri(path: string): string {
  return `sha384-${createHash('sha384').update(readFileSync(path)).digest('base64')}`;
}

/** Writes `<path>.br` and `<path>.gz`, the forms servers send to browsers that accept them. */
export function precompress(path: string): void {
  const body = readFileSync(path);
  writeFileSync(
    `${path}.br`,
    brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  );
  writeFileSync(`${path}.gz`, gzipSync(body, { level: 9 }));
}

/**
 * Builds the three files into `outDir`. They are written to a scratch folder inside it and renamed into
 * place (the loader last), then earlier builds' hashed files are removed: a server reading `outDir` while
 * another process builds never finds the loader naming a chunk that is not there.
 */
export async function buildWidget(options: { outDir?: string; minify?: boolean } = {}): Promise<BuiltWidget> {
  const outDir = resolve(options.outDir ?? join(here, 'dist'));
  const minify = options.minify ?? true;
  mkdirSync(outDir, { recursive: true });
  const scratch = mkdtempSync(join(outDir, '.build-'));
  try {
    const worker = await bundle(workerEntry(), 'gatehouse-pow', scratch, minify);
    const ui = await bundle(join(here, 'src/ui/index.ts'), 'gatehouse-ui', scratch, minify);
    const i18n = await bundle(join(here, 'src/i18n-pack.ts'), 'gatehouse-i18n', scratch, minify);
    const names = {
      __GATEHOUSE_I18N_FILE__: JSON.stringify(i18n.file),
      __GATEHOUSE_UI_FILE__: JSON.stringify(ui.file),
      __GATEHOUSE_WORKER_FILE__: JSON.stringify(worker.file),
      __GATEHOUSE_VERSION__: JSON.stringify(pkg.version),
      // Subresource Integrity of the lazily loaded files: the loader may fetch them from a standby host.
      __GATEHOUSE_SRI__: JSON.stringify(
        Object.fromEntries([ui, worker, i18n].map((f) => [f.file, sri(f.path)])),
      ),
    };
    const loader = await bundle(join(here, 'src/loader.ts'), 'gatehouse', scratch, minify, names);
    const compat = await bundle(join(here, 'src/compat/index.ts'), 'gatehouse-compat', scratch, minify, {
      ...names,
      __GATEHOUSE_COMPAT__: 'true',
    });
    const built = { loader, ui, worker, i18n, compat };
    for (const f of [worker, ui, i18n, compat, loader]) precompress(f.path);
    for (const f of [worker, ui, i18n, compat, loader]) {
      const path = join(outDir, f.file);
      for (const ext of ['.br', '.gz']) renameSync(f.path + ext, path + ext);
      renameSync(f.path, path);
      f.path = path;
    }
    const keep = new Set([loader.file, ui.file, worker.file, i18n.file]);
    for (const f of readdirSync(outDir)) {
      if (
        /^gatehouse-(ui|pow|i18n)\.[\w-]+\.js(\.br|\.gz)?$/.test(f) &&
        !keep.has(f.replace(/\.(br|gz)$/, ''))
      )
        rmSync(join(outDir, f), { force: true });
    }
    return built;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
  const built = await buildWidget({ outDir: out, minify: !args.includes('--no-minify') });
  for (const f of Object.values(built)) console.log(`${f.path}  ${f.bytes} bytes`);
}
