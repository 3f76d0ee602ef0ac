import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, TEST_DATABASE } from './harness.ts';
import { firstUrl, freePort, ROOT, type Started, startStartTs } from './start-process.ts';

/*
 * The README's shell blocks, as a new user meets them: a block marked `<!-- readme.test: run -->` is run
 * by bash, line for line as written, in a fresh shell (no Gatehouse variable set) in a folder below the one
 * `npm start` runs in, against `npm start` listening on ports that are not the defaults. Every other block
 * names only npm scripts that exist.
 */
const run = (await databaseAvailable()) && TEST_DATABASE === 'pglite';
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Block {
  lines: string[];
  run: boolean;
}

function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  let marked = false;
  for (const line of markdown.split('\n')) {
    if (current) {
      if (line.startsWith('```')) {
        blocks.push(current);
        current = undefined;
      } else current.lines.push(line);
    } else if (line.trim() === '<!-- readme.test: run -->') marked = true;
    else if (line.trim() === '```sh') {
      current = { lines: [], run: marked };
      marked = false;
    } else if (line.trim() !== '') marked = false;
  }
  return blocks;
}

/** The shell a person opens: PATH (Node 24 first, as `npm install` provides it) and HOME, nothing else. */
function freshShellEnv(): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? tmpdir(),
  };
}

async function bash(script: string, cwd: string) {
  const child = spawn('bash', ['-c', script], {
    cwd,
    env: freshShellEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

describe('README shell blocks', () => {
  it('has a block to run, and every other block names npm scripts that exist', () => {
    const blocks = shellBlocks(README);
    expect(blocks.filter((b) => b.run).length).toBeGreaterThan(0);
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts,
    );
    const builtIn = ['install', 'ci'];
    for (const block of blocks.filter((b) => !b.run)) {
      for (const line of block.lines) {
        for (const m of line.matchAll(/\bnpm (?:run )?([\w:-]+)/g)) {
          expect([...scripts, ...builtIn], line).toContain(m[1]);
        }
      }
    }
  });

  it('names every port variable of .env.example', () => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    const ports = [...example.matchAll(/^(\w*PORT)=/gm)].map((m) => m[1]!);
    expect(ports).toEqual(expect.arrayContaining(['PORT', 'DEMO_PORT', 'STANDBY_BYPASS_PORT']));
    for (const variable of ports) expect(README).toContain(`\`${variable}\``);
  });
});

describe.runIf(run)('README "Try it", run as written', { timeout: 240_000 }, () => {
  let work: string;
  let started: Started;
  let api: string;

  beforeAll(async () => {
    // A folder laid out as the checkout: its package.json, its node_modules (so `npx gatehouse` finds the
    // command, as in the repository), and `npm start` run in it. Its own .gatehouse-data keeps the
    // developer's untouched.
    work = mkdtempSync(join(tmpdir(), 'gatehouse-readme-'));
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'gatehouse', private: true }));
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'));
    started = await startStartTs(
      {
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        DEMO_PORT: String(await freePort()),
        STANDBY_BYPASS_PORT: String(await freePort()),
        STANDBY_FALLBACK_PORT: String(await freePort()),
      },
      work,
    );
    api = firstUrl(started.banner.get('API'));
    expect(api).not.toBe('http://127.0.0.1:8080');
  }, 180_000);

  afterAll(async () => {
    if (started && started.child.exitCode === null) {
      const exited = once(started.child, 'exit');
      started.child.kill('SIGTERM');
      await exited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('validates the pass token it solved, then forces the slide puzzle', async () => {
    const sub = join(work, 'some', 'folder');
    mkdirSync(sub, { recursive: true });
    const block = shellBlocks(README).find((b) => b.run)!;
    const script = ['set -euo pipefail', ...block.lines, 'echo', 'echo "APP_KEY=$APP_KEY"'].join('\n');
    const result = await bash(script, sub);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);

    const validated = JSON.parse(result.stdout.split('\n').find((l) => l.startsWith('{'))!) as {
      code: number;
      data: { valid: boolean; action: string };
    };
    expect(validated).toMatchObject({ code: 0, data: { valid: true, action: 'login' } });
    // The last line turned test mode off, so the forced slide is what a visitor gets: no warning.
    expect(result.stderr).not.toContain('test mode is on');

    // What a visitor now gets: the app as the admin API shows it.
    const appKey = /^APP_KEY=(ak_\S+)$/m.exec(result.stdout)![1]!;
    const token = readFileSync(join(work, '.gatehouse-data', 'admin-token'), 'utf8').trim();
    const res = await fetch(`${api}/admin/v1/apps/${appKey}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const app = ((await res.json()) as { data: { test_mode: boolean; risk_policy: object } }).data;
    expect(app).toMatchObject({
      test_mode: false,
      risk_policy: { invisible_below: 0, image_kinds: ['slide'] },
    });

    // Run from a folder below the checkout, the command used the running server: no database of its own.
    expect(existsSync(join(sub, '.gatehouse-data'))).toBe(false);
  });
});
