import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const DOCKERFILE = resolve(import.meta.dirname, '../../Dockerfile');

/** The lines of the Dockerfile's `api` stage (from `FROM … AS api` to the next FROM), continuations joined. */
function apiStage(path: string): string[] {
  const lines = readFileSync(path, 'utf8').replace(/\\\n/g, ' ').split('\n');
  const start = lines.findIndex((l) => /^FROM\s+\S+\s+AS\s+api\s*$/i.test(l.trim()));
  if (start < 0) throw new Error(`${path}: no stage named api`);
  const end = lines.findIndex((l, i) => i > start && /^FROM\s/i.test(l.trim()));
  return lines.slice(start + 1, end < 0 ? undefined : end).map((l) => l.trim());
}

/**
 * The flags between `node` and the script in the API image's exec-form CMD (the Dockerfile's `api` target):
 * the benches start the API as the image does, so a flag changed there is measured without a second copy
 * to keep in step.
 */
export function dockerfileNodeFlags(path = DOCKERFILE): string[] {
  const cmd = apiStage(path).find((line) => line.startsWith('CMD ['));
  const words = cmd ? (JSON.parse(cmd.slice(4)) as string[]) : [];
  if (words[0] !== 'node') throw new Error(`${path}: expected an exec-form CMD ["node", ...flags, script]`);
  return words.slice(1).filter((w) => w.startsWith('--'));
}

/** The environment variables that choose and tune the allocator (a preloaded one, or glibc's MALLOC_*). */
const ALLOCATOR_ENV = /^(LD_PRELOAD|MALLOC_[A-Z_]+)$/;

/** Where this machine's dynamic libraries are (Debian's multiarch folders first). */
function libraryDirs(): string[] {
  return ['/usr/lib', '/lib', '/usr/local/lib'].flatMap((dir) => {
    let multiarch: string[] = [];
    try {
      multiarch = readdirSync(dir).filter((d) => d.endsWith('-linux-gnu'));
    } catch {}
    return [...multiarch.map((d) => join(dir, d)), dir];
  });
}

/**
 * The allocator settings of the API image (its `ENV` LD_PRELOAD and MALLOC_* in the `api` stage), for the
 * benches' API processes, so they run on the allocator the image runs (jemalloc; docs/decisions.md,
 * "Runtime and API memory"). A library this machine lacks is left out of LD_PRELOAD and named in
 * `missing`: the process then runs on glibc's malloc, and the bench says so.
 */
export function dockerfileAllocatorEnv(path = DOCKERFILE): { env: Record<string, string>; missing?: string } {
  const env: Record<string, string> = {};
  for (const line of apiStage(path)) {
    const m = /^ENV\s+(.*)$/.exec(line);
    for (const pair of m ? m[1]!.trim().split(/\s+/) : []) {
      const at = pair.indexOf('=');
      if (at > 0 && ALLOCATOR_ENV.test(pair.slice(0, at))) env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  if (!env.LD_PRELOAD) return { env };
  // A name without a slash is looked up by the dynamic loader in the library folders; a path as written.
  const dirs = libraryDirs();
  const libraries = env.LD_PRELOAD.split(/[:\s]+/).filter(Boolean);
  const present = libraries.filter((lib) =>
    lib.includes('/') ? existsSync(lib) : dirs.some((dir) => existsSync(join(dir, lib))),
  );
  if (present.length) env.LD_PRELOAD = present.join(':');
  else delete env.LD_PRELOAD;
  const missing = libraries.filter((lib) => !present.includes(lib));
  return missing.length ? { env, missing: missing.join(', ') } : { env };
}

/**
 * The measured API process's allocator environment: the API image's (dockerfileAllocatorEnv), or
 * BENCH_API_ENV's space-separated NAME=value pairs instead (`BENCH_API_ENV=LD_PRELOAD=` for glibc's malloc),
 * and a line saying which, for the bench's output.
 */
export function benchApiEnv(given = process.env.BENCH_API_ENV): {
  env: Record<string, string>;
  note: string;
} {
  if (given !== undefined) {
    const env = Object.fromEntries(
      given
        .split(/\s+/)
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    return { env, note: `API environment from BENCH_API_ENV: ${given.trim() || '(none)'}` };
  }
  const { env, missing } = dockerfileAllocatorEnv();
  const set = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return {
    env,
    note: missing
      ? `!!! the API image preloads ${missing}, absent on this machine: the API runs on glibc's malloc here`
      : `API allocator as the API image sets it: ${set.join(' ') || "glibc's malloc"}`,
  };
}
