import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** `npm start` (api/src/start.ts) as a child process, for end-to-end tests. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Started {
  child: ChildProcess;
  /** Banner lines: label → value. */
  banner: Map<string, string>;
  output: () => string;
}

/** Runs start.ts in `cwd` (default the repository, as `npm start` does), with only `env` and PATH/HOME. */
export async function startStartTs(env: Record<string, string>, cwd = ROOT): Promise<Started> {
  const child = spawn(process.execPath, [join(ROOT, 'api/src/start.ts')], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const banner = new Map<string, string>();
  await new Promise<void>((ready, reject) => {
    const timer = setTimeout(() => reject(new Error(`start.ts did not start in 120 s:\n${output}`)), 120_000);
    child.once('exit', (code) => reject(new Error(`start.ts exited with ${code}:\n${output}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      const m = /^ {2}(\S[^ ]*(?: \S+)*?) {2,}(\S.*)$/.exec(line);
      if (m) banner.set(m[1]!, m[2]!);
      if (line.startsWith('Ctrl-C stops everything')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  return { child, banner, output: () => output };
}

/** The first URL in a banner value. */
export const firstUrl = (value: string | undefined) => /^(https?:\/\/\S+)/.exec(value ?? '')?.[1] ?? '';

/** A port that was free a moment ago: the child binds it right away. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
}

/** Spawns `node api/src/server.ts` (or `node <args>`: the bundle, say) and waits until /healthz answers. */
export async function spawnApi(
  env: Record<string, string>,
  args: string[] = ['api/src/server.ts'],
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(join(ROOT, 'node_modules/.bin/node'), args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API process exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`API process on ${url} did not answer in 30 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, child, output: () => output };
}

export async function stop(api: ApiProcess | undefined): Promise<void> {
  if (!api || api.child.exitCode !== null || api.child.signalCode !== null) return;
  const exited = once(api.child, 'exit');
  api.child.kill('SIGTERM');
  const timer = setTimeout(() => api.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
