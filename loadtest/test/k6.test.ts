import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_CI, ROOT, Stack, servicesUp } from './stack-harness.ts';

/**
 * The short form of every k6 scenario (loadtest/run.sh <scenario> --short) against one stack of
 * 2 regions × 2 instances. k6 comes from K6, else where `bash .ci/tools.sh k6` builds it
 * ($GATEHOUSE_TOOLS_DIR/bin, default .cache/tools/bin).
 * Exit code 99 means a threshold failed: the summary printed above the failure says which.
 */

const K6 = process.env.K6 ?? join(process.env.GATEHOUSE_TOOLS_DIR ?? join(ROOT, '.cache/tools'), 'bin/k6');
const BASE_PORT = 29000;

function k6Available(): boolean {
  if (existsSync(K6)) return true;
  const message = `k6 not found at ${K6}: build it with 'nice bash .ci/tools.sh k6' (about 90 s of CPU with a warm Go module cache).`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING the k6 scenarios: ${message}\n`);
  return false;
}

const run = k6Available() && (await servicesUp('the k6 scenarios'));

function runScenario(stack: Stack, scenario: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; output: string; ms: number }>((resolve) => {
    const started = Date.now();
    // Vitest puts Vite's BASE_URL ('/') in process.env: the scenarios would take it for their target.
    const { BASE_URL: _vite, ...inherited } = process.env;
    const child = spawn('bash', [join(ROOT, 'loadtest/run.sh'), scenario, '--short'], {
      cwd: ROOT,
      env: {
        ...inherited,
        K6,
        STACK_BASE_PORT: String(BASE_PORT),
        ENDPOINTS: stack.endpointsFile,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('exit', (code) => resolve({ code, output, ms: Date.now() - started }));
  });
}

describe.runIf(run)('k6 scenarios, short forms (2 regions × 2 instances)', () => {
  const stack = new Stack({ regions: 2, instances: 2, basePort: BASE_PORT, database: 'gatehouse_stack_k6' });
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const started = Date.now();
    await stack.ready();
    timings.stack = Date.now() - started;
  }, 200_000);

  afterAll(async () => {
    await stack.stop();
    console.log(`k6 scenario timings (ms): ${JSON.stringify(timings)}`);
  }, 60_000);

  // In this order: the failover drills last (they kill and restart regions).
  const cases: [string, string, Record<string, string>][] = [
    ['validate', 'validate', {}],
    ['challenge', 'challenge', {}],
    ['issuance', 'issuance', {}],
    ['soak', 'soak', {}],
    ['failover-one', 'failover', { DRILL: 'one' }],
    ['failover-all', 'failover', { DRILL: 'all' }],
  ];
  for (const [name, scenario, env] of cases) {
    it(`${name} passes its thresholds`, async () => {
      const { code, output, ms } = await runScenario(stack, scenario, env);
      timings[name] = ms;
      const why = code === 99 ? 'thresholds failed' : `exit code ${code}`;
      // Lines a scenario logs about each failure (failover: "end user failed: …"), however many came before the summary.
      const failures = output
        .split('\n')
        .filter((line) => line.includes('end user failed'))
        .slice(0, 20)
        .join('\n');
      expect(
        code,
        `${name}: ${why}\n${failures}\n${output.slice(-4000)}\n${stack.output().slice(-2000)}`,
      ).toBe(0);
    }, 180_000);
  }
});
