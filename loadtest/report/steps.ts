import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Step } from './data.ts';
import { loadAverage } from './machine.ts';

/** How one step runs: a program of the repository, and the JSON file it leaves behind. */
export interface StepSpec {
  /** As a person would type it from the repository's root (shown in the report). */
  command: string;
  program: string;
  args: string[];
  env?: Record<string, string>;
  /** The file the program writes; removed first, so a stale one is never reported as new. */
  output: string;
  /** The k6 steps: without k6 they are reported as not measured instead of failing to start. */
  needsK6?: boolean;
}

/**
 * Runs a step with its output shown as it comes (the benchmarks print progress), then reads its JSON.
 * A step that fails is recorded with the reason; the report goes on with the next one.
 */
export async function runStep<T>(root: string, spec: StepSpec): Promise<Step<T>> {
  rmSync(spec.output, { force: true });
  const started = new Date();
  const loadBefore = loadAverage();
  console.log(`\n=== ${spec.command}`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(spec.program, spec.args, {
      cwd: root,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', (error) => {
      console.error(`${spec.command}: ${error.message}`);
      resolve(null);
    });
    child.on('exit', (exitCode) => resolve(exitCode));
  });
  const record: Step<T> = {
    command: spec.command,
    started: started.toISOString(),
    seconds: (Date.now() - started.getTime()) / 1000,
    loadBefore,
    loadAfter: loadAverage(),
  };
  if (code !== 0) return { ...record, error: `\`${spec.command}\` exited with ${code ?? 'an error'}` };
  if (!existsSync(spec.output)) return { ...record, error: `\`${spec.command}\` wrote no ${spec.output}` };
  try {
    return { ...record, data: JSON.parse(readFileSync(spec.output, 'utf8')) as T };
  } catch (error) {
    return { ...record, error: `${spec.output}: ${(error as Error).message}` };
  }
}

export interface StepOptions {
  root: string;
  node: string;
  k6: string;
  scratch: string;
  quick: boolean;
}

/** The report's steps, in the order they run: the throughput cases first, on a machine still cool. */
export function stepSpecs(o: StepOptions): Record<string, StepSpec> {
  const apiArgs = o.quick ? ['--duration', '2', '--warmup', '0.5'] : ['--duration', '5', '--warmup', '1'];
  const rounds = o.quick ? '1' : '2';
  const runs = o.quick ? '30' : '200';
  // One core for the image bench: its figures are per challenge, as one API request pays them.
  const pin = existsSync('/usr/bin/taskset') ? ['/usr/bin/taskset', '-c', '0'] : [];
  const k6Env = { K6: o.k6, STACK_BASE_PORT: '19000', ENDPOINTS: join(o.scratch, 'endpoints.json') };
  const results = join(o.root, 'loadtest/results');
  return {
    api: {
      command: `node loadtest/bench/run.ts --peers --only postgresql --no-write ${apiArgs.join(' ')} --json FILE`,
      program: o.node,
      args: [
        'loadtest/bench/run.ts',
        '--peers',
        '--only',
        'postgresql',
        '--no-write',
        ...apiArgs,
        '--json',
        join(o.scratch, 'api.json'),
      ],
      output: join(o.scratch, 'api.json'),
    },
    pow: {
      command: `POW_BENCH_ROUNDS=${rounds} node loadtest/bench/pow/run.ts`,
      program: o.node,
      args: ['loadtest/bench/pow/run.ts'],
      env: { POW_BENCH_ROUNDS: rounds },
      output: join(o.root, '.cache/pow-bench/results.json'),
    },
    images: {
      command: `${pin.length ? 'taskset -c 0 ' : ''}node loadtest/bench/images.ts --runs ${runs} --json FILE`,
      program: pin[0] ?? o.node,
      args: [
        ...pin.slice(1),
        ...(pin.length ? [o.node] : []),
        'loadtest/bench/images.ts',
        '--runs',
        runs,
        '--json',
        join(o.scratch, 'images.json'),
      ],
      output: join(o.scratch, 'images.json'),
    },
    soak: {
      command: 'loadtest/run.sh soak --short',
      program: 'bash',
      args: ['loadtest/run.sh', 'soak', '--short'],
      env: k6Env,
      output: join(results, 'soak.json'),
      needsK6: true,
    },
    failoverOne: {
      command: 'DRILL=one loadtest/run.sh failover --short',
      program: 'bash',
      args: ['loadtest/run.sh', 'failover', '--short'],
      env: { ...k6Env, DRILL: 'one' },
      output: join(results, 'failover-one.json'),
      needsK6: true,
    },
    failoverAll: {
      command: 'DRILL=all loadtest/run.sh failover --short',
      program: 'bash',
      args: ['loadtest/run.sh', 'failover', '--short'],
      env: { ...k6Env, DRILL: 'all' },
      output: join(results, 'failover-all.json'),
      needsK6: true,
    },
  };
}
