/**
 * Builds every SDK and writes its release artifacts, versioned, into one folder (default dist/release):
 *   gatehouse-node-<v>.tgz       @gatehouse/node: ESM + CJS + .d.ts, no server dependency (npm pack)
 *   gatehouse-web-<v>.tgz        @gatehouse/web: ES modules, React and Vue components, types, the widget build
 *   go/                          a GOPROXY tree: github.com/gatehouse/gatehouse/sdk/go/@v/v<v>.{info,mod,zip}
 *   gatehouse-php-<v>.zip        a Composer package (composer.json at its root, with its version): a
 *                                Composer "artifact" repository can install it as it is
 *   SHA256SUMS                   the checksum of every file above
 * The version is the packages' own (sdk/node and sdk/web must agree; Go and PHP take the same), or
 * `--version X.Y.Z`. Publishing is a separate, manual step (sdk/release/README.md).
 *
 *   npm run release:pack [-- --out DIR] [--version X.Y.Z]
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { zipSync } from 'fflate';
import { buildNode, dependencyRange, ENTRIES as NODE_ENTRIES, RUNTIME_DEPENDENCIES } from '../node/build.ts';
import { buildWebPackage, PACKAGE_ENTRIES as WEB_ENTRIES } from '../web/build-package.ts';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, '../..');
export const GO_MODULE = 'github.com/gatehouse/gatehouse/sdk/go';

type Manifest = Record<string, unknown> & { name: string; version: string };
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

export interface Artifacts {
  version: string;
  outDir: string;
  node: string;
  web: string;
  /** A GOPROXY folder (use as GOPROXY=file://<go>). */
  goProxy: string;
  goZip: string;
  php: string;
}

/** The fields of a workspace manifest that describe the package, whatever its build. */
function described(m: Manifest, version: string): Record<string, unknown> {
  const keep = ['name', 'description', 'license', 'keywords', 'repository', 'homepage', 'engines'];
  return { ...Object.fromEntries(keep.filter((k) => k in m).map((k) => [k, m[k]])), version };
}

async function npmPack(stage: string, outDir: string): Promise<string> {
  const { stdout } = await run(
    'npm',
    ['pack', stage, '--pack-destination', outDir, '--json', '--ignore-scripts'],
    {
      cwd: stage,
    },
  );
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  if (!packed) throw new Error(`npm pack ${stage} printed no file`);
  return join(outDir, packed.filename);
}

async function packNode(version: string, outDir: string, scratch: string): Promise<string> {
  const source = join(REPO, 'sdk/node');
  const stage = join(scratch, 'node');
  await buildNode({ outDir: join(stage, 'dist') });
  copyFileSync(join(REPO, 'docs/sdk-node.md'), join(stage, 'README.md'));
  copyFileSync(join(REPO, 'LICENSE'), join(stage, 'LICENSE'));
  const exports = Object.fromEntries(
    Object.keys(NODE_ENTRIES).map((name) => [
      name === 'index' ? '.' : `./${name}`,
      {
        import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
        require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
      },
    ]),
  );
  const manifest = {
    ...described(readJson<Manifest>(join(source, 'package.json')), version),
    type: 'module',
    main: './dist/index.cjs',
    module: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { ...exports, './package.json': './package.json' },
    files: ['dist', 'README.md', 'LICENSE'],
    sideEffects: false,
    dependencies: Object.fromEntries(RUNTIME_DEPENDENCIES.map((name) => [name, dependencyRange(name)])),
  };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return npmPack(stage, outDir);
}

async function packWeb(version: string, outDir: string, scratch: string): Promise<string> {
  const source = join(REPO, 'sdk/web');
  const stage = join(scratch, 'web');
  await buildWebPackage({ outDir: join(stage, 'dist') });
  copyFileSync(join(REPO, 'LICENSE'), join(stage, 'LICENSE'));
  copyFileSync(join(source, 'package/README.md'), join(stage, 'README.md'));
  for (const framework of ['react', 'vue']) {
    mkdirSync(join(stage, framework), { recursive: true });
    cpSync(join(source, 'package', framework), join(stage, framework), { recursive: true });
  }
  const m = readJson<Manifest>(join(source, 'package.json'));
  const exports = Object.fromEntries(
    Object.keys(WEB_ENTRIES).map((name) => [
      name === 'index' ? '.' : `./${name}`,
      { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
    ]),
  );
  const manifest = {
    ...described(m, version),
    description:
      'Gatehouse browser widget for bundlers: an ES module that loads the widget from your Gatehouse API, React and Vue components, types.',
    type: 'module',
    module: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { ...exports, './widget/*': './dist/widget/*', './package.json': './package.json' },
    files: ['dist', 'react', 'vue', 'README.md', 'LICENSE'],
    sideEffects: false,
    peerDependencies: m.peerDependencies,
    peerDependenciesMeta: m.peerDependenciesMeta,
  };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return npmPack(stage, outDir);
}

/** Every file under `dir`, as paths relative to it (sorted, so archives are reproducible). */
function filesUnder(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const rel = relative(dir, path);
      if (skip(rel)) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out.push(rel);
    }
  };
  walk(dir);
  return out;
}

/** A zip with fixed timestamps: the same inputs give the same bytes. */
function zip(entries: Record<string, Uint8Array>): Uint8Array {
  const mtime = new Date('1980-01-01T00:00:00Z');
  return zipSync(Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, [v, { mtime }]])));
}

/**
 * The Go module as the module proxy protocol serves it: `@v/list`, `<v>.info`, `<v>.mod`, `<v>.zip` (files
 * under `<module>@<v>/`). `go get <module>@v<v>` with GOPROXY=file://<this folder> installs it; a real
 * release is the git tag `sdk/go/v<v>` (the module lives in a subfolder), from which the public proxy
 * builds the same zip.
 */
function packGo(version: string, outDir: string): { proxy: string; zip: string } {
  const source = join(REPO, 'sdk/go');
  const v = `v${version}`;
  const proxy = join(outDir, 'go');
  const at = join(proxy, GO_MODULE, '@v');
  mkdirSync(at, { recursive: true });
  const entries: Record<string, Uint8Array> = {};
  for (const rel of filesUnder(source)) entries[`${GO_MODULE}@${v}/${rel}`] = readFileSync(join(source, rel));
  const bytes = zip(entries);
  writeFileSync(join(at, `${v}.zip`), bytes);
  copyFileSync(join(source, 'go.mod'), join(at, `${v}.mod`));
  writeFileSync(
    join(at, `${v}.info`),
    `${JSON.stringify({ Version: v, Time: new Date(0).toISOString() })}\n`,
  );
  writeFileSync(join(at, 'list'), `${v}\n`);
  const named = join(outDir, `gatehouse-go-${v}.zip`);
  writeFileSync(named, bytes);
  return { proxy, zip: named };
}

/**
 * The PHP package: the root composer.json with its paths made relative to the package (sdk/php/src ->
 * src) and its version set, the sources, autoload.php for use without Composer, the license and a README.
 */
function packPhp(version: string, outDir: string): string {
  const source = join(REPO, 'sdk/php');
  const composer = readJson<Record<string, unknown>>(join(REPO, 'composer.json'));
  const relocate = (map: unknown) =>
    Object.fromEntries(
      Object.entries((map as { 'psr-4': Record<string, string> })['psr-4']).map(([ns, path]) => [
        ns,
        path.replace(/^sdk\/php\//, ''),
      ]),
    );
  // The repository's archive.exclude names repository paths: the zip holds the package alone already.
  const { 'autoload-dev': _dev, archive: _archive, ...rest } = composer;
  const manifest = { ...rest, version, autoload: { 'psr-4': relocate(composer.autoload) } };
  const entries: Record<string, Uint8Array> = {
    'composer.json': Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
    LICENSE: readFileSync(join(REPO, 'LICENSE')),
    'README.md': readFileSync(join(REPO, 'docs/sdk-php.md')),
    'autoload.php': readFileSync(join(source, 'autoload.php')),
  };
  for (const rel of filesUnder(join(source, 'src')))
    entries[`src/${rel}`] = readFileSync(join(source, 'src', rel));
  const path = join(outDir, `gatehouse-php-${version}.zip`);
  writeFileSync(path, zip(entries));
  return path;
}

/** The release version: the npm packages' (which must agree), unless given. */
export function releaseVersion(given?: string): string {
  const versions = ['sdk/node', 'sdk/web'].map(
    (p) => readJson<Manifest>(join(REPO, p, 'package.json')).version,
  );
  const version = given ?? versions[0];
  if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version))
    throw new Error(`release version "${version}" is not semver (X.Y.Z[-pre])`);
  if (!given && new Set(versions).size !== 1)
    throw new Error(`sdk/node and sdk/web disagree on the version (${versions.join(' vs ')})`);
  return version;
}

export async function packRelease(options: { outDir?: string; version?: string } = {}): Promise<Artifacts> {
  const version = releaseVersion(options.version);
  const outDir = resolve(options.outDir ?? join(REPO, 'dist/release'));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-release-'));
  try {
    const node = await packNode(version, outDir, scratch);
    const web = await packWeb(version, outDir, scratch);
    const go = packGo(version, outDir);
    const php = packPhp(version, outDir);
    const sums = [node, web, go.zip, php]
      .map((f) => `${createHash('sha256').update(readFileSync(f)).digest('hex')}  ${relative(outDir, f)}`)
      .join('\n');
    writeFileSync(join(outDir, 'SHA256SUMS'), `${sums}\n`);
    return { version, outDir, node, web, goProxy: go.proxy, goZip: go.zip, php };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const artifacts = await packRelease({ outDir: arg('--out'), version: arg('--version') });
  console.log(readFileSync(join(artifacts.outDir, 'SHA256SUMS'), 'utf8').trimEnd());
  console.log(`Go proxy tree: ${artifacts.goProxy}`);
}
