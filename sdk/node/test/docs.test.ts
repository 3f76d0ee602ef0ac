import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * docs/sdk-node.md is executable: every block after `<!-- example: NAME -->` runs against a real API, and
 * each `// prints: X` comment must be exactly the matching line the program prints.
 */

/** Runs a program and resolves with its exit code and output; asynchronous, since the API runs in this process. */
async function run(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }) {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { ...options, timeout: 60_000 });
    return { status: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOC = readFileSync(join(ROOT, 'docs/sdk-node.md'), 'utf8');
const EXAMPLES = [...DOC.matchAll(/<!-- example: ([\w-]+) -->\n```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
  name: m[1]!,
  lang: m[2]!,
  code: m[3]!,
}));

describe('docs/sdk-node.md examples', () => {
  let api: TestApi;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name: 'docs', test_mode: true });
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GATEHOUSE_URL: api.url,
      GATEHOUSE_APP_KEY: app.appKey,
      GATEHOUSE_APP_SECRET: app.appSecret,
    };
    // The examples import '@gatehouse/node' as an integrator's code would: through node_modules.
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has the examples it promises', () => {
    expect(EXAMPLES.map((e) => e.name)).toEqual([
      'validate',
      'wrong-action',
      'errors',
      'server-token',
      'cli',
      'continuity',
    ]);
  });

  for (const example of EXAMPLES.filter((e) => e.lang === 'ts')) {
    it(`${example.name}: prints what its comments say`, async () => {
      const file = join(dir, `${example.name}.ts`);
      writeFileSync(file, example.code);
      const result = await run(process.execPath, [file], { env });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const expected = [...example.code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]!.trim());
      expect(expected.length).toBeGreaterThan(0);
      expect(result.stdout.trimEnd().split('\n')).toEqual(expected);
    }, 60_000);
  }

  it('cli: gatehouse solve --json prints pass_token, tier and challenge_id', async () => {
    const example = EXAMPLES.find((e) => e.name === 'cli')!;
    const result = await run('bash', ['-c', example.code], { cwd: ROOT, env });
    expect(result.status, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual({
      pass_token: expect.stringMatching(/^pt_/),
      tier: 'invisible',
      challenge_id: expect.stringMatching(/^ch_/),
    });
  }, 60_000);
});
