/** Builds what the benchmark runs: the native baselines (Go, libsodium) and the browser bundles, under .cache/. */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '../../..');
export const cacheDir = join(repoRoot, '.cache/pow-bench');
const www = join(cacheDir, 'www');

/**
 * Builds the Go program (a missing Go toolchain throws) and, where libsodium-dev is installed
 * (`apt-get install -y libsodium-dev`), the libsodium program; without it that column is skipped, loudly.
 */
export function buildNative(): { go: string; sodium?: string } {
  mkdirSync(cacheDir, { recursive: true });
  const go = join(cacheDir, 'powbench-go');
  const sodium = join(cacheDir, 'powbench-sodium');
  execFileSync('go', ['build', '-o', go, '.'], { cwd: join(here, 'native'), stdio: 'inherit' });
  try {
    execFileSync('cc', ['-O2', '-o', sodium, join(here, 'native/sodium/sodium.c'), '-lsodium'], {
      stdio: 'inherit',
    });
    return { go, sodium };
  } catch {
    process.stderr.write(
      'libsodium-dev missing: native figures exclude libsodium (apt-get install libsodium-dev)\n',
    );
    return { go };
  }
}

/** Bundles the benchmark worker and Gatehouse's own PoW worker exactly as the widget would (esbuild, ESM). */
export async function buildBrowser(): Promise<void> {
  mkdirSync(www, { recursive: true });
  const common = {
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
  } as const;
  await build({
    ...common,
    entryPoints: [join(here, 'browser/bench-worker.ts')],
    outfile: join(www, 'bench-worker.js'),
  });
  await build({
    ...common,
    entryPoints: [join(repoRoot, 'core/src/pow/worker.ts')],
    outfile: join(www, 'gatehouse-pow-worker.js'),
  });
  const modules = join(repoRoot, 'node_modules');
  copyFileSync(join(modules, '@cap.js/wasm/browser/cap_wasm_bg.wasm'), join(www, 'cap_wasm_bg.wasm'));
  // ALTCHA's own widget worker, unchanged: what its widget starts for PBKDF2 challenges.
  copyFileSync(join(modules, 'altcha/dist/workers/pbkdf2.js'), join(www, 'altcha-pbkdf2-worker.js'));
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html',
};

/** Serves the bundles on 127.0.0.1 (Workers need a same-origin URL); resolves with the base URL. */
export function serve(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '') || 'index.html';
    if (name.includes('..')) return void res.writeHead(400).end();
    if (name === 'index.html')
      return void res.writeHead(200, { 'content-type': TYPES['.html'] }).end('<!doctype html>');
    try {
      const body = readFileSync(join(www, name));
      res.writeHead(200, { 'content-type': TYPES[extname(name)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ url: `http://127.0.0.1:${port}/`, server });
    }),
  );
}
