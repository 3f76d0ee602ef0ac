import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The repository's shape, as each folder's README states it: a "May import:" line names what its code may
 * import from other folders, a "Tests may import:" line what its tests may import besides. Entries are in
 * backticks: a folder (`core`, `sdk/web`), one file (`operator/test/control-plane.ts`) or a package entry
 * (`@gatehouse/api/testing`). Beyond what the READMEs say, two rules hold everywhere: nothing outside
 * loadtest/ imports the lab, and code that is not a test reaches another folder's test helpers only through
 * that package's `testing` entry.
 */

const ROOT = import.meta.dirname;
const FOLDERS = [
  'core',
  'api',
  'standby',
  'sdk/node',
  'sdk/web',
  'sdk/release',
  'operator',
  'charts',
  'k8s',
  'loadtest',
];
const SKIP = new Set(['node_modules', 'dist', '.cache', '.stack', 'results']);
const SOURCE = /\.(ts|js|mjs)$/;

/** Each workspace's package name and its exports, so that `@gatehouse/x/y` resolves to a file. */
const PACKAGES = new Map<string, { dir: string; exports: Record<string, string> }>();
for (const dir of FOLDERS) {
  let manifest: { name?: string; exports?: Record<string, string> | string };
  try {
    manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
  } catch {
    continue;
  }
  if (!manifest.name) continue;
  const exports = typeof manifest.exports === 'string' ? { '.': manifest.exports } : (manifest.exports ?? {});
  PACKAGES.set(manifest.name, { dir, exports });
}

function folderOf(path: string): string | undefined {
  return FOLDERS.filter((f) => path === f || path.startsWith(`${f}/`)).sort((a, b) => b.length - a.length)[0];
}

const isTest = (path: string) => /(^|\/)test\//.test(path) || /\.test\.ts$/.test(path);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) {
      // A nested folder with its own rule is checked as itself.
      if (!FOLDERS.includes(path)) out.push(...files(path));
    } else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Reference {
  specifier: string;
  /** The file it names, relative to the repository (for a package: the file its export maps to). */
  target: string;
  /** The package entry used, when it was one. */
  entry?: string;
  unexported?: boolean;
}

function references(file: string): Reference[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: Reference[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const specifier = (m[1] ?? m[2]) as string;
    if (specifier.startsWith('.')) {
      out.push({ specifier, target: normalize(join(dirname(file), specifier)) });
      continue;
    }
    const scoped = /^(@gatehouse\/[^/]+)(\/.*)?$/.exec(specifier);
    if (!scoped) continue;
    const pkg = PACKAGES.get(scoped[1] as string);
    if (!pkg) {
      out.push({ specifier, target: `<unknown package ${specifier}>` });
      continue;
    }
    const subpath = `.${scoped[2] ?? ''}`;
    const mapped = pkg.exports[subpath];
    // An entry the workspace does not export is the published package's (built by sdk/release): it stays in
    // its package's folder, and another folder may name it only where its README does.
    out.push({
      specifier,
      entry: specifier,
      target: normalize(join(pkg.dir, mapped ?? subpath)),
      unexported: !mapped,
    });
  }
  return out;
}

interface Rule {
  code: string[];
  tests: string[];
}

function rule(folder: string): Rule {
  const readme = readFileSync(join(ROOT, folder, 'README.md'), 'utf8');
  const line = (label: RegExp) => {
    const m = label.exec(readme);
    if (!m) return undefined;
    // The statement is one sentence: it ends at the first full stop (or the paragraph's end).
    const rest = readme.slice(m.index + m[0].length);
    const end = rest.search(/\.(\s|$)|\n\s*\n/);
    return [...(end < 0 ? rest : rest.slice(0, end)).matchAll(/`([^`]+)`/g)].map((x) => x[1] as string);
  };
  const code = line(/^(?:- )?May import:/m);
  if (!code) throw new Error(`${folder}/README.md has no "May import:" line`);
  return { code, tests: line(/^(?:- )?Tests may import:/m) ?? [] };
}

/**
 * A package's name (`@gatehouse/core`) stands for its whole folder, a path ending in `/` for what is under it;
 * a package entry or a file for itself.
 */
function allowed(entries: string[], ref: Reference): boolean {
  const folder = folderOf(ref.target);
  return entries.some(
    (e) =>
      e === ref.entry ||
      e === ref.target ||
      e === folder ||
      PACKAGES.get(e)?.dir === folder ||
      (e.endsWith('/') && ref.target.startsWith(e)),
  );
}

describe('each folder imports only what its README\'s "May import" allows', () => {
  for (const folder of FOLDERS) {
    it(folder, () => {
      const { code, tests } = rule(folder);
      const wrong: string[] = [];
      for (const file of files(folder)) {
        const test = isTest(relative(folder, file));
        for (const ref of references(file)) {
          const there = folderOf(ref.target);
          if (there === folder) continue;
          const where = `${file} → ${ref.specifier}`;
          if (there === undefined) {
            // Outside every folder: the root's own files only (the workspace manifest, the vitest config).
            if (!/^[^/]+$/.test(ref.target) || ref.target.startsWith('<'))
              wrong.push(`${where}: ${ref.target}`);
            continue;
          }
          if (there === 'loadtest') {
            wrong.push(`${where}: the product never imports the lab`);
            continue;
          }
          if (!test && isTest(relative(there, ref.target)) && !ref.entry) {
            wrong.push(`${where}: another folder's test helper, not through its package's testing entry`);
            continue;
          }
          const entries = test ? [...code, ...tests] : code;
          if (ref.unexported ? !entries.includes(ref.specifier) : !allowed(entries, ref))
            wrong.push(`${where}: not in ${folder}/README.md`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }
});

describe('the rule itself', () => {
  it('resolves package entries and relative paths to files that exist', () => {
    const refs = references('loadtest/adversarial/harness.ts');
    const harness = refs.find((r) => r.entry === '@gatehouse/api/testing');
    expect(harness?.target).toBe('api/test/harness.ts');
    expect(statSync(join(ROOT, harness!.target)).isFile()).toBe(true);
    expect(refs.some((r) => r.target.startsWith('core/src/'))).toBe(true);
  });

  it('reads both lines of a README', () => {
    const { code, tests } = rule('sdk/web');
    expect(code.length).toBeGreaterThan(0);
    expect(tests).toContain('@gatehouse/api/testing');
  });
});
