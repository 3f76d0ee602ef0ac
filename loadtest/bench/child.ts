import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Command, Ready, Reply } from './protocol.ts';

type Request = Command extends infer C ? (C extends Command ? Omit<C, 'id'> : never) : never;

/** A server child process (`api-child.ts` or `koa-child.ts`) and its command channel. */
export class Child {
  readonly process: ChildProcess;
  readonly url: string;
  readonly database: string;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  #nextId = 1;

  private constructor(child: ChildProcess, ready: Ready) {
    this.process = child;
    this.url = `http://127.0.0.1:${ready.port}`;
    this.database = ready.database;
    child.on('message', (message: Reply) => {
      this.#pending.get(message.id)?.(message);
      this.#pending.delete(message.id);
    });
  }

  /** Forks `file` (relative to this folder) with exactly `env` (plus PATH and HOME) and waits until it listens. */
  static async start(file: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), {
      execPath: process.execPath,
      execArgv,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      // The API's request log goes to /dev/null; stderr is kept to explain a failed start.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const ready = await new Promise<Ready>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${file} did not start in 120 s:\n${stderr}`)),
        120_000,
      );
      child.once('message', (message: Ready) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${file} exited with ${code} before listening:\n${stderr}`));
      });
    });
    return new Child(child, ready);
  }

  get pid(): number {
    return this.process.pid!;
  }

  call<T>(request: Request): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, (reply) =>
        reply.error ? reject(new Error(reply.error)) : resolve(reply.value as T),
      );
      this.process.send({ ...request, id } as Command);
    });
  }

  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = once(this.process, 'exit');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
    await this.call({ type: 'close' }).catch(() => this.process.kill('SIGTERM'));
    await exited;
    clearTimeout(timer);
  }
}
