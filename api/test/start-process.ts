import { type ChildProcess, spawn } from 'node:child_process';
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

export async function startStartTs(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [join(ROOT, 'api/src/start.ts')], {
    cwd: ROOT,
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
