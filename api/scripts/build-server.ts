import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * `npm run build -w @gatehouse/api`: the main API as bundled JavaScript, `api/dist/server.js` and the chunks
 * it loads (some only on demand), plus the image renderer's entry beside it (`api/dist/image-worker.js`,
 * the process the API forks to draw challenges: api/src/challenges/image-pool.ts). It is what the container
 * runs (the Dockerfile's api target).
 *
 * Why a bundle: Node runs the TypeScript sources through its type stripper, which costs resident memory in
 * every process (the stripper's WebAssembly and every module kept as source twice); the bundle runs as plain
 * JavaScript, within the API's budget of 150 MiB per process. Gatehouse's own workspaces (`@gatehouse/*`) are
 * bundled; npm packages stay external, loaded from node_modules as from the sources (native addons, WebAssembly
 * and files found next to their modules keep working untouched).
 *
 * The sources still ship beside the bundle: paths a module finds relative to itself (`import.meta.url`,
 * `import.meta.dirname`: migrations, the console's UI, the widget's sources, the datacenter ranges) are
 * rewritten to the module's original place, so they resolve as they do from the sources. A process or
 * worker entry named as `new URL('./x.ts', import.meta.url)` whose file is an entry below points at its
 * bundled output.
 */
const API = resolve(import.meta.dirname, '..');
export const DIST = join(API, 'dist');

const ENTRIES: Record<string, string> = {
  server: join(API, 'src/server.ts'),
  'image-worker': join(API, 'src/challenges/image-worker.ts'),
};

/**
 * npm packages that stay in node_modules: native addons, WebAssembly or worker files found next to their
 * own module, and what runs only on demand (the console's and the widget's builds). Everything else is
 * bundled: each ES module loaded separately costs resident memory (drizzle-orm alone has hundreds of files).
 */
const EXTERNAL = [
  '@electric-sql/pglite',
  '@napi-rs/canvas',
  '@gatehouse/web',
  'esbuild',
  'pino',
  'pino-pretty',
  'thread-stream',
  'swagger-ui-dist',
];

const externals: Plugin = {
  name: 'externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const external = EXTERNAL.some((name) => args.path === name || args.path.startsWith(`${name}/`));
      return external ? { external: true } : undefined;
    });
  },
};

/**
 * `node:http` (or `http`) as CommonJS wherever it is imported: an ES import of a built-in module reads every
 * export, and node:http's WebSocket, CloseEvent and MessageEvent are lazy getters that load undici, Node's
 * fetch, into every API process, which never uses it (@koa/router's ES build and core/src/http/listen.ts import
 * it). `require` is the bundle's own (the banner's createRequire).
 */
const commonJsHttp: Plugin = {
  name: 'commonjs-http',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.namespace === 'commonjs-http'
        ? { path: 'node:http', external: true }
        : { path: 'node:http', namespace: 'commonjs-http' },
    );
    b.onLoad({ filter: /.*/, namespace: 'commonjs-http' }, () => ({
      contents: `module.exports = require('node:http');`,
      loader: 'js',
    }));
  },
};

/** Stands for the bundle's own `import.meta.url` while the module's are rewritten. */
const BUNDLE_URL = '__gatehouse_bundle_url__';

/** Rewrites `import.meta` in each bundled module of ours to mean that module's source file. */
const sourceLocations = (outdir: string, entryFiles: Map<string, string>): Plugin => ({
  name: 'source-locations',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      let code = readFileSync(args.path, 'utf8');
      const entry = entryFiles.has(args.path);
      // 1. A worker that is itself an entry: its bundled file, beside this one.
      code = code.replace(
        /new URL\((['"])(\.\.?\/[^'"]+\.ts)\1, import\.meta\.url\)/g,
        (whole, _q, rel: string) => {
          const output = entryFiles.get(resolve(dirname(args.path), rel));
          return output ? `new URL(${JSON.stringify(`./${output}`)}, ${BUNDLE_URL})` : whole;
        },
      );
      // 2. The module's own location, relative to the bundle (so the installed tree can move).
      const rel = relative(outdir, args.path);
      const url = `new URL(${JSON.stringify(rel)}, import.meta.url)`;
      code = code
        .replace(/import\.meta\.url\b/g, `${url}.href`)
        .replace(/import\.meta\.filename\b/g, `__gatehouseFileOf(${url})`)
        .replace(/import\.meta\.dirname\b/g, `__gatehouseDirOf(${url})`);
      code = code.replaceAll(BUNDLE_URL, 'import.meta.url');
      // 3. Only the entry is the main module (server.ts starts the server when run directly).
      if (!entry) code = code.replace(/import\.meta\.main\b/g, 'false');
      return { contents: code, loader: 'ts', resolveDir: dirname(args.path) };
    });
  },
});

/**
 * Builds the bundle into `outdir` (default api/dist; the paths to the sources are relative to it, so the
 * bundle and the sources move together), with `extraEntries` (name → source; the bench's API child) built
 * the same way beside it; returns the server's file.
 */
export async function buildServer(outdir = DIST, extraEntries: Record<string, string> = {}): Promise<string> {
  mkdirSync(outdir, { recursive: true });
  const entries = { ...ENTRIES, ...extraEntries };
  const entryFiles = new Map(Object.entries(entries).map(([name, file]) => [file, `${name}.js`]));
  const result = await build({
    entryPoints: entries,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Non-ASCII in strings, templates and regular expressions comes out as escapes (esbuild's default,
    // stated because asciiOnly below relies on it).
    charset: 'ascii',
    // What our code imports dynamically (PGlite and its driver without DATABASE_URL, ioredis, the Privacy
    // Pass verifier, the OpenAPI document) becomes a chunk of its own, read only when imported: in one file,
    // an external package such a module imports (PGlite) would be loaded at start-up, and the source of
    // every module is held in memory once the file is. Code the entries share is a chunk too.
    splitting: true,
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
    banner: {
      js: [
        // CommonJS packages bundled into this ES module require Node's built-ins.
        `import { createRequire as __gatehouseCreateRequire } from 'node:module';`,
        'const require = __gatehouseCreateRequire(import.meta.url);',
        `import { fileURLToPath as __gatehouseFileOf } from 'node:url';`,
        `import { dirname as __gatehouseDirname } from 'node:path';`,
        'const __gatehouseDirOf = (url) => __gatehouseDirname(__gatehouseFileOf(url));',
      ].join('\n'),
    },
    plugins: [commonJsHttp, externals, sourceLocations(outdir, entryFiles)],
  });
  for (const file of result.outputFiles) {
    writeFileSync(file.path, file.path.endsWith('.js') ? asciiOnly(file.text) : file.contents);
  }
  return join(outdir, 'server.js');
}

/**
 * The bundle with every character left outside ASCII replaced by `?`. V8 keeps a module's source in
 * memory for as long as the process lives (functions compile lazily from it), one byte per character
 * when the file is ASCII and two bytes when it is not: a single dash in a comment of a bundled package
 * would double the resident size of the whole server bundle's source. With
 * `charset: 'ascii'`, what is left outside ASCII is comment text, so nothing that runs changes, and one
 * `?` per UTF-16 unit keeps the columns the source map points at.
 */
export function asciiOnly(code: string): string {
  return code.replace(/[\u0080-\uffff]/g, '?');
}

if (import.meta.main) {
  const file = await buildServer();
  console.log(`built ${relative(process.cwd(), file)} (${pathToFileURL(file).href})`);
}
