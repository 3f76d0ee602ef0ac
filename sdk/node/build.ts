/**
 * Builds the published form of @gatehouse/node into `outDir` (default sdk/node/dist):
 *   index.js, headless.js (+ shared chunks)   ES modules
 *   index.cjs, headless.cjs                   CommonJS, for `require`
 *   index.d.ts, headless.d.ts (+ .d.cts)      type declarations, one self-contained file per entry
 * The parts of @gatehouse/core the SDK uses (token prefixes, proof-of-work) are bundled in, so the
 * package depends on no server code; hash-wasm (the proof-of-work's WebAssembly) stays a dependency.
 * Within the repository the package is used from its TypeScript sources; only the packed tarball
 * (sdk/release/pack.ts) points at this build.
 *
 * As a script: node sdk/node/build.ts [--out DIR]
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

/** The oldest Node line the build targets: every maintained line from 22 on (docs/decisions.md). */
export const NODE_TARGET = 'node22';
export const ENTRIES = { index: 'src/index.ts', headless: 'src/headless.ts' } as const;
/** Runtime dependencies of the built package: the bundled core code's, without the server's. */
export const RUNTIME_DEPENDENCIES = ['hash-wasm'] as const;

export async function buildNode(options: { outDir?: string } = {}): Promise<string> {
  const outDir = resolve(options.outDir ?? join(here, 'dist'));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const entryPoints = Object.fromEntries(
    Object.entries(ENTRIES).map(([name, src]) => [name, join(here, src)]),
  );
  const common = {
    entryPoints,
    outdir: outDir,
    bundle: true,
    platform: 'node' as const,
    target: NODE_TARGET,
    external: [...RUNTIME_DEPENDENCIES],
    legalComments: 'none' as const,
    logLevel: 'warning' as const,
  };
  await build({ ...common, format: 'esm', splitting: true, chunkNames: 'chunks/[name]-[hash]' });
  await build({ ...common, format: 'cjs', outExtension: { '.js': '.cjs' } });
  await declarations(outDir);
  return outDir;
}

/** One self-contained .d.ts per entry (core's types inlined), and the same as .d.cts for `require`. */
async function declarations(outDir: string): Promise<void> {
  const { generateDtsBundle } = await import('dts-bundle-generator');
  // Only the SDK's entries (and what they import), not the whole repository.
  const project = join(here, 'tsconfig.build.json');
  const names = Object.keys(ENTRIES);
  const bundles = generateDtsBundle(
    Object.values(ENTRIES).map((src) => ({
      filePath: join(here, src),
      libraries: { inlinedLibraries: ['@gatehouse/core'] },
      output: { noBanner: true, exportReferencedTypes: false },
    })),
    { preferredConfigPath: project },
  );
  bundles.forEach((text, i) => {
    const file = join(outDir, `${names[i]}.d.ts`);
    writeFileSync(file, text);
    copyFileSync(file, join(outDir, `${names[i]}.d.cts`));
  });
}

/** The version of a dependency as the repository pins it (core's package.json for the bundled code). */
export function dependencyRange(name: string): string {
  const core = JSON.parse(readFileSync(join(repo, 'core/package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const range = core.dependencies[name];
  if (!range) throw new Error(`core/package.json does not depend on ${name}`);
  return range;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
  console.log(await buildNode({ outDir: out }));
}
