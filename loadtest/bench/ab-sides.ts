import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import postgres from 'postgres';
import { Child } from './child.ts';
import { dockerfileAllocatorEnv, dockerfileNodeFlags } from './node-flags.ts';

/** What an A/B script compares: side A, the API at `base`; side B, the working tree's; both bundled. */
export interface AbSidesOptions {
  /** A git revision, or `worktree` to build both sides from the working tree (settings compared, not code). */
  base: string;
  /** Names the scratch folder and database (`gh_<prefix>_…`). */
  prefix: string;
  /** `<rev>:<path>` files written over side A's tree (an older version of a few files only). */
  take?: readonly string[];
  /**
   * Workspaces side A takes from the revision too (package name under @gatehouse → folder); without them A
   * bundles the working tree's (only `api/` differs).
   */
  workspaces?: Readonly<Record<string, string>>;
}

export interface AbSides {
  /** The scratch folder (inside loadtest/bench/dist, ignored by git), removed by `close`. */
  work: string;
  /** The bundled API child of a side, as `Child.start` takes it. */
  child(side: 'a' | 'b'): string;
  /** A fresh PostgreSQL database for this run, dropped by `close`. */
  database: { name: string; url: string };
  /** The API's environment for both sides: that database, a data folder in the scratch folder. */
  env: Record<string, string>;
  /** Started children, stopped by `close`. */
  children: Child[];
  close(): Promise<void>;
}

const BENCH = import.meta.dirname;
const REPO = resolve(BENCH, '../..');

/**
 * Builds both sides of an A/B of the API and gives them one scratch database. Shared by ab-submit.ts,
 * ab-validate.ts and renderer-memory.ts: the revision's `api/` is taken with `git archive` (its tests left
 * out) into loadtest/bench/dist, so that its imports find the repository's node_modules, and bundled by its own
 * build script, as the container runs it. TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */
export async function prepareAbSides(options: AbSidesOptions): Promise<AbSides> {
  mkdirSync(join(BENCH, 'dist'), { recursive: true });
  const work = mkdtempSync(join(BENCH, 'dist', `${options.prefix}-`));
  const tree = join(work, 'tree');
  mkdirSync(tree);
  const workspaces = options.workspaces ?? {};
  const revision = options.base === 'worktree' ? 'HEAD' : options.base;
  // Checked out through an index of its own, not `git archive`: the repository's .gitattributes
  // export-ignores everything but the PHP package (docs/decisions.md).
  const git = { env: { ...process.env, GIT_INDEX_FILE: join(work, 'index') }, maxBuffer: 1 << 30 };
  execFileSync('git', ['-C', REPO, 'read-tree', revision], git);
  const files = execFileSync(
    'git',
    ['-C', REPO, 'ls-files', '-z', '--', 'api', ...Object.values(workspaces)],
    git,
  )
    .toString()
    .split('\0')
    .filter((f) => f && !f.endsWith('.test.ts') && !f.startsWith('api/test/'));
  execFileSync('git', ['-C', REPO, 'checkout-index', '-z', '--stdin', `--prefix=${tree}/`], {
    ...git,
    input: files.join('\0'),
  });
  for (const taken of options.take ?? []) {
    const path = taken.slice(taken.indexOf(':') + 1);
    writeFileSync(join(tree, path), execFileSync('git', ['-C', REPO, 'show', taken], { maxBuffer: 1 << 30 }));
  }
  if (Object.keys(workspaces).length) {
    // The revision's workspaces, found by the revision's code before the repository's (tree/node_modules).
    mkdirSync(join(tree, 'node_modules/@gatehouse'), { recursive: true });
    for (const [name, dir] of Object.entries(workspaces)) {
      symlinkSync(join(tree, dir), join(tree, 'node_modules/@gatehouse', name));
    }
  }

  const admin = postgres(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', {
    max: 1,
    onnotice: () => {},
  });
  const name = `gh_${options.prefix}_${randomBytes(4).toString('hex')}`;
  const children: Child[] = [];
  const close = async () => {
    for (const c of children) await c.stop();
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const { buildServer: buildBase } = await import(join(tree, 'api/scripts/build-server.ts'));
    const { buildServer: buildNew } = await import('../../api/scripts/build-server.ts');
    const ours = { 'api-child': join(BENCH, 'api-child.ts') };
    if (options.base === 'worktree') await buildNew(join(work, 'a'), ours);
    else await buildBase(join(work, 'a'), { 'api-child': revisionChild(tree) });
    await buildNew(join(work, 'b'), ours);
    await admin.unsafe(`create database ${name}`);
  } catch (error) {
    await close();
    throw error;
  }
  const url = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  return {
    work,
    child: (side) => `./${relative(BENCH, join(work, side, 'api-child.js'))}`,
    database: { name, url: url.toString() },
    env: { LOG_LEVEL: 'info', DATA_DIR: join(work, 'data'), DATABASE_URL: url.toString() },
    children,
    close,
  };
}

/**
 * Per side, Node flags (default the API image's) and environment added to the sides' own, which include
 * the API image's allocator (`LD_PRELOAD=` in a side's environment for glibc's malloc).
 */
export interface SideSettings {
  flags?: { a?: string[] | undefined; b?: string[] | undefined };
  env?: { a?: Record<string, string>; b?: Record<string, string> };
}

/**
 * Starts the three processes every A/B uses: `prep` (side B's code, default flags) to create apps and mint
 * tokens outside what is measured, and the measured servers A and B; all stopped by `close`.
 */
export async function startSides(sides: AbSides, settings: SideSettings = {}) {
  const prep = await Child.start(sides.child('b'), sides.env);
  sides.children.push(prep);
  const start = (side: 'a' | 'b') =>
    Child.start(
      sides.child(side),
      { ...sides.env, ...dockerfileAllocatorEnv().env, ...settings.env?.[side] },
      settings.flags?.[side] ?? dockerfileNodeFlags(),
    );
  const servers = { A: await start('a'), B: await start('b') };
  sides.children.push(servers.A, servers.B);
  return { prep, servers };
}

/** The median of a round's figures (the upper middle for an even count). */
export const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

/**
 * Prints each figure's A and B medians, B/A, B/A by round and in how many rounds B was lower, then the load
 * average: one line per figure, the form every A/B script's report takes. `unit` follows each median.
 */
export function printAbFigures(figures: Record<string, { A: number[]; B: number[] }>, unit = ''): void {
  for (const [what, { A, B }] of Object.entries(figures)) {
    const rounds = A.map((a, i) => (B[i]! / a).toFixed(2)).join(' ');
    const lower = A.filter((a, i) => B[i]! < a).length;
    console.log(
      `${what}: A ${median(A)}${unit}, B ${median(B)}${unit} (medians), B/A ${(median(B) / median(A)).toFixed(2)}; ` +
        `by round ${rounds} (B lower in ${lower}/${A.length})`,
    );
  }
  printLoadAverage();
}

/** The machine's load average at the end of a run: how much the figures above were shared with. */
export function printLoadAverage(): void {
  console.log(
    `load average after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

/**
 * The bench's child as the revision had it, so that it drives that revision's API as it was: where the
 * revision kept it inside api/, that copy; otherwise today's, placed in the extracted tree at the same
 * relative place so that its imports reach the revision's sources.
 */
function revisionChild(tree: string): string {
  const inApi = join(tree, 'api/bench/api-child.ts');
  if (existsSync(inApi)) return inApi;
  const dir = join(tree, relative(REPO, BENCH));
  mkdirSync(dir, { recursive: true });
  // The child's own modules (its IPC, pool and protocol) come along with it.
  for (const f of readdirSync(BENCH)) if (f.endsWith('.ts')) copyFileSync(join(BENCH, f), join(dir, f));
  return join(dir, 'api-child.ts');
}
