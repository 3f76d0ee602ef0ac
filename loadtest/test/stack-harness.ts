import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `npm run stack` as a child process for the loadtest tests: ready line, stdin commands, clean stop. */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const IN_CI = process.env.CI === 'true';
// The servers `.ci/run` starts (TEST_POSTGRES_URL, TEST_REDIS_URL), else the usual local ports.
const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Endpoints {
  adminToken: string;
  control: string;
  apps: Record<'test' | 'real', { appKey: string; appSecret: string }>;
  regions: { name: string; api: string; instances: string[]; bypass: string; fallback: string }[];
}

export class Stack {
  readonly proc: ChildProcess;
  readonly dir: string;
  readonly basePort: number;
  endpoints!: Endpoints;
  #out = '';
  #waiters: { re: RegExp; from: number; done: (m: string) => void }[] = [];

  constructor(options: { regions: number; instances: number; basePort: number; database: string }) {
    this.basePort = options.basePort;
    this.dir = mkdtempSync(join(tmpdir(), 'gatehouse-stack-'));
    const db = new URL(POSTGRES);
    db.pathname = `/${options.database}`;
    this.proc = spawn(
      process.execPath,
      [
        join(ROOT, 'loadtest/stack/main.ts'),
        '--regions',
        String(options.regions),
        '--instances',
        String(options.instances),
        '--base-port',
        String(options.basePort),
        '--out',
        this.endpointsFile,
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          STACK_DATABASE_URL: db.toString(),
          REDIS_URL: REDIS,
          STACK_DATA_DIR: join(this.dir, 'data'),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const take = (chunk: Buffer) => {
      this.#out += chunk.toString('utf8');
      for (const w of [...this.#waiters]) {
        const m = w.re.exec(this.#out.slice(w.from));
        if (m) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.done(m[0]);
        }
      }
    };
    this.proc.stdout!.on('data', take);
    this.proc.stderr!.on('data', take);
  }

  get endpointsFile(): string {
    return join(this.dir, 'endpoints.json');
  }

  output(): string {
    return this.#out.slice(-6000);
  }

  /** How much the stack has printed so far: a `from` for waitFor that includes lines printed since. */
  get printed(): number {
    return this.#out.length;
  }

  /** The first match of `re` in what the stack prints from now on (or from `from`). */
  waitFor(re: RegExp, ms: number, from = this.#out.length): Promise<string> {
    return new Promise((resolveMatch, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`stack: no ${re} after ${ms} ms\n${this.output()}`)),
        ms,
      );
      const done = (m: string) => {
        clearTimeout(timer);
        resolveMatch(m);
      };
      const m = re.exec(this.#out.slice(from));
      if (m) return done(m[0]);
      this.#waiters.push({ re, from, done });
      this.proc.once('exit', (code) =>
        reject(new Error(`stack exited (${code}) while waiting for ${re}\n${this.output()}`)),
      );
    });
  }

  async ready(ms = 180_000): Promise<Endpoints> {
    await this.waitFor(/^stack: ready.*$/m, ms, 0);
    this.endpoints = JSON.parse(readFileSync(this.endpointsFile, 'utf8')) as Endpoints;
    return this.endpoints;
  }

  /** Writes a command on stdin and returns the JSON line it answers. */
  async command(line: string, ms = 120_000): Promise<Record<string, unknown>> {
    const from = this.#out.length;
    this.proc.stdin!.write(`${line}\n`);
    const answer = await this.waitFor(/^(\{|\[|error:).*$/m, ms, from);
    if (answer.startsWith('error:')) throw new Error(answer);
    return JSON.parse(answer);
  }

  /** SIGINT (Ctrl-C) and waits for the exit; returns the exit code. */
  async stop(): Promise<number | null> {
    if (this.proc.exitCode !== null) return this.proc.exitCode;
    const exited = new Promise<number | null>((r) => this.proc.once('exit', (code) => r(code)));
    this.proc.kill('SIGINT');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(timer);
    rmSync(this.dir, { recursive: true, force: true });
    return code;
  }
}

/** Polls `check` every 50 ms until true; throws after `ms`. */
export async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

export async function standbyServing(url: string): Promise<boolean> {
  return (await standbyStatus(url)).serving === true;
}

/** A standby's /status: `mode` is what the operator (here the stack's operator probes) told it. */
export async function standbyStatus(url: string): Promise<{ serving: boolean; mode: string }> {
  const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
  return (await res.json()) as { serving: boolean; mode: string };
}

export async function portClosed(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}

/** PostgreSQL and Redis answer on their ports (a TCP connect); skip loudly outside CI, throw in CI. */
export async function servicesUp(what: string): Promise<boolean> {
  const { connect } = await import('node:net');
  const open = (port: number) =>
    new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1');
      const done = (ok: boolean) => {
        s.destroy();
        r(ok);
      };
      s.setTimeout(1000, () => done(false));
      s.once('connect', () => done(true));
      s.once('error', () => r(false));
    });
  const pgPort = Number(new URL(POSTGRES).port || 5432);
  const redisPort = Number(new URL(REDIS).port || 6379);
  const [pg, redis] = await Promise.all([open(pgPort), open(redisPort)]);
  if (pg && redis) return true;
  const message = `${what} needs PostgreSQL on 127.0.0.1:${pgPort} and Redis on 127.0.0.1:${redisPort} (TEST_POSTGRES_URL, TEST_REDIS_URL; .ci/run starts both).`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
}
