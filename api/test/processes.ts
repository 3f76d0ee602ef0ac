import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Gatehouse's entry points as real `node` processes, their last lines kept for errors: the drills' and the
 * local stack's (`@gatehouse/api/testing/processes`).
 */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export class Child {
  readonly name: string;
  readonly proc: ChildProcess;
  #lines: string[] = [];

  constructor(name: string, script: string, env: Record<string, string>) {
    this.name = name;
    this.proc = spawn(process.execPath, [join(ROOT, script)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      this.#lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (this.#lines.length > 100) this.#lines.splice(0, this.#lines.length - 100);
    };
    this.proc.stdout!.on('data', keep);
    this.proc.stderr!.on('data', keep);
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  output(): string {
    return `--- ${this.name} (pid ${this.proc.pid}) ---\n${this.#lines.join('\n')}`;
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    if (!this.running) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Polls `url` until it answers 200 and `check` accepts its JSON; throws with the child's output otherwise. */
export async function waitUntilReady(
  child: Child,
  url: string,
  ms = 90_000,
  // biome-ignore lint/suspicious/noExplicitAny: a status document read field by field.
  check: (body: any) => boolean = () => true,
): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (!child.running) throw new Error(`${child.name} exited before it was ready\n${child.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200 && check(await res.json())) return;
      await res.body?.cancel().catch(() => {});
    } catch {}
    if (Date.now() > until)
      throw new Error(`${child.name} not ready at ${url} after ${ms} ms\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A port that was free a moment ago (bound to 0, read, released): drills need fixed ports across restarts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
