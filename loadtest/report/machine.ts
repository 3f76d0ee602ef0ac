import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';

/** The machine a report ran on, as every figure names it. */
export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  /** Versions of what the steps ran: k6, Go, PostgreSQL, Redis, Chromium (when found). */
  tools: Record<string, string>;
}

/** The first line `command args` prints, or undefined when the command is absent or fails. */
function version(command: string, args: string[]): string | undefined {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    })
      .split('\n')[0]
      ?.trim();
  } catch {
    return undefined;
  }
}

export function describeMachine(k6: string): Machine {
  const tools: Record<string, string> = {};
  const found: [string, string | undefined][] = [
    ['k6', version(k6, ['version'])],
    ['go', version('go', ['version'])],
    ['postgres', version('psql', ['--version'])],
    ['redis', version('redis-server', ['--version'])],
    ['chromium', version('chromium', ['--version'])],
  ];
  for (const [name, v] of found) if (v) tools[name] = v;
  return {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: `Linux ${release()}`,
    node: `Node ${process.version}`,
    tools,
  };
}

/** One line naming the machine, for captions: "2 × Intel Xeon, 23.5 GiB, Linux 6.1". */
export function machineLine(m: Machine): string {
  return `${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB, ${m.kernel}, ${m.node}`;
}

export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}
