import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Child processes for the failover drill: real `node` entry points, their output kept for failures. */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** A port that was free a moment ago (bound to 0, read, released): the drill needs fixed ports across restarts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export class NodeProcess {
  readonly name: string;
  readonly child: ChildProcess;
  #lines: string[] = [];

  constructor(name: string, script: string, env: Record<string, string>) {
    this.name = name;
    this.child = spawn(process.execPath, [join(ROOT, script)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      this.#lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (this.#lines.length > 200) this.#lines.splice(0, this.#lines.length - 200);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines it printed, for a failure message. */
  output(): string {
    return `--- ${this.name} (pid ${this.child.pid}) ---\n${this.#lines.join('\n')}`;
  }

  /** Sends `signal` and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    await exited;
  }
}

/**
 * Polls `url` until it answers 200 (and, when given, its JSON satisfies `check`); throws with the
 * process's output when it dies or `ms` pass.
 */
export async function waitUntilReady(
  proc: NodeProcess,
  url: string,
  ms = 60_000,
  // biome-ignore lint/suspicious/noExplicitAny: a status document read field by field.
  check: (body: any) => boolean = () => true,
): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (!proc.running) throw new Error(`${proc.name} exited before it was ready\n${proc.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200 && check(await res.json())) return;
      await res.body?.cancel().catch(() => {});
    } catch {}
    if (Date.now() > until)
      throw new Error(`${proc.name} not ready at ${url} after ${ms} ms\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
