/**
 * Builds the published form of @gatehouse/web into `outDir` (default sdk/web/dist/package):
 *   index.js, react.js, vue.js (+ shared chunks)   ES modules for bundlers; nothing runs at import time
 *   index.d.ts, react.d.ts, vue.d.ts               their types, one self-contained file per entry
 *   widget/                                        the script build (build.ts), for self-hosting it
 * React and Vue stay imports (peer dependencies of the package). The widget's script itself is served
 * by the Gatehouse API; the modules load it from there (src/package/index.ts).
 *
 * As a script: node sdk/web/build-package.ts [--out DIR]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildWidget } from './build.ts';

const here = dirname(fileURLToPath(import.meta.url));

export const PACKAGE_ENTRIES = {
  index: 'src/package/index.ts',
  react: 'src/package/react.ts',
  vue: 'src/package/vue.ts',
} as const;
/** Imports left to the integrator's bundler: the frameworks, peer dependencies of the package. */
export const PEERS = ['react', 'vue'] as const;

export async function buildWebPackage(options: { outDir?: string } = {}): Promise<string> {
  const outDir = resolve(options.outDir ?? join(here, 'dist/package'));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(PACKAGE_ENTRIES).map(([name, src]) => [name, join(here, src)]),
    ),
    outdir: outDir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'neutral',
    // The browsers are the floor (they all run ES2021: class fields, ??=, ?.). Chrome 91, not 90: esbuild
    // lowers every ?. for 90 (a V8 bug fixed in 91), hundreds of bytes of the loader's 10 KB budget; an extra
    // es2020 target would lower class fields into helper calls too.
    target: ['chrome91', 'firefox90', 'safari15'],
    external: [...PEERS],
    legalComments: 'none',
    logLevel: 'warning',
  });
  const { generateDtsBundle } = await import('dts-bundle-generator');
  const names = Object.keys(PACKAGE_ENTRIES);
  const bundles = generateDtsBundle(
    Object.values(PACKAGE_ENTRIES).map((src) => ({
      filePath: join(here, src),
      output: { noBanner: true, exportReferencedTypes: false },
    })),
    { preferredConfigPath: join(here, 'tsconfig.build.json') },
  );
  bundles.forEach((text, i) => {
    writeFileSync(join(outDir, `${names[i]}.d.ts`), text);
  });
  await buildWidget({ outDir: join(outDir, 'widget') });
  return outDir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
  console.log(await buildWebPackage({ outDir: out }));
}
