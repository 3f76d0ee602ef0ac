import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE } from './harness.ts';
import { freePort, ROOT } from './start-process.ts';

/*
 * The API image's recipe (the Dockerfile's `api` target), followed without Docker (none runs here): the files
 * its COPY lines take (tracked files only, as .dockerignore leaves out node_modules and every dist/), its
 * `npm ci` for the API workspace alone with dev dependencies omitted, its build steps, then its CMD with its
 * ENV. What a fresh container serves is then asked over HTTP, the way a browser would: the widget a site
 * embeds, the demo page. It caught an image that answered 503 to /widget/gatehouse.js: the widget was built
 * on first request by @gatehouse/web, which the production install does not link.
 */
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** The instructions of one stage (`FROM … AS <name>` up to the next FROM), one per logical line. */
function instructions(stage: 'manifests' | 'api-deps' | 'api'): Array<[op: string, arg: string]> {
  const lines = DOCKERFILE.replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'))
    .map((l) => /^(\w+)\s+(.*)$/.exec(l.trim()) as RegExpExecArray)
    .map((m) => [m[1]!.toUpperCase(), m[2]!] as [string, string]);
  const start = lines.findIndex(([op, arg]) => op === 'FROM' && arg.endsWith(` AS ${stage}`));
  if (start < 0) throw new Error(`the Dockerfile has no stage ${stage}`);
  const end = lines.findIndex(([op], i) => i > start && op === 'FROM');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** What the API's dependencies stage does: the manifests stage it starts from, then its own steps. */
const depsSteps = () => [...instructions('manifests'), ...instructions('api-deps')];

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);

function copy(source: string, dir: string): void {
  const prefix = source.replace(/\/$/, '');
  for (const file of tracked) {
    if (file !== prefix && !file.startsWith(`${prefix}/`)) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
}

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv): void {
  execFileSync('sh', ['-c', command], { cwd, env, stdio: 'pipe', timeout: 300_000 });
}

// The image's default database is the embedded one: the pglite project runs it once.
describe.runIf(TEST_DATABASE === 'pglite')(
  "the API image recipe (the Dockerfile's api target), in a production install",
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-image-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-image-data-'));
    // The repository's pinned Node first on PATH, as the image's node:24 base has it.
    const env = { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}` };
    let child: ChildProcess | undefined;
    let url = '';
    let output = '';

    beforeAll(async () => {
      for (const [op, arg] of [...depsSteps(), ...instructions('api')]) {
        if (op === 'COPY' && !arg.startsWith('--from'))
          for (const source of arg.split(/\s+/).slice(0, -1)) copy(source, dir);
      }
      for (const [op, arg] of depsSteps()) if (op === 'RUN') sh(arg, dir, env);
      for (const [op, arg] of instructions('api')) {
        // Build steps only: creating and handing over /data needs root, which the container has and a test has not.
        if (op === 'RUN')
          for (const step of arg.split('&&')) if (/^\s*(node|npm)\s/.test(step)) sh(step, dir, env);
      }
      const imageEnv = Object.fromEntries(
        instructions('api')
          .filter(([op]) => op === 'ENV')
          .flatMap(([, arg]) => arg.split(/\s+/).map((pair) => pair.split('=') as [string, string])),
      );
      const cmd = JSON.parse(instructions('api').find(([op]) => op === 'CMD')?.[1] ?? '[]') as string[];
      expect(cmd[0]).toBe('node');
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      child = spawn(join(ROOT, 'node_modules/.bin/node'), cmd.slice(1), {
        cwd: dir,
        env: {
          PATH: env.PATH,
          ...imageEnv,
          HOST: '127.0.0.1',
          PORT: String(port),
          DATA_DIR: dataDir,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (d) => {
        output += d;
      });
      child.stderr?.on('data', (d) => {
        output += d;
      });
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null)
          throw new Error(`the image's CMD exited with ${child.exitCode}:\n${output}`);
        if (
          await fetch(`${url}/healthz`).then(
            (r) => r.ok,
            () => false,
          )
        )
          break;
        if (Date.now() > deadline) throw new Error(`the image's CMD did not answer in 60 s:\n${output}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }, 600_000);

    afterAll(async () => {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child?.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('serves the widget a site embeds, and its lazy parts, from a fresh container', async () => {
      const loader = await fetch(`${url}/widget/gatehouse.js`, { headers: { 'accept-encoding': 'br' } });
      expect(loader.status, output).toBe(200);
      expect(loader.headers.get('content-type')).toMatch(/javascript/);
      const source = await fetch(`${url}/widget/gatehouse.js`).then((r) => r.text());
      // The loader names its content-hashed chunks; each must be there too.
      const chunks = [...new Set(source.match(/gatehouse-(?:ui|pow|i18n)\.[\w-]+\.js/g) ?? [])];
      expect(chunks.length).toBeGreaterThanOrEqual(3);
      for (const chunk of chunks) expect((await fetch(`${url}/widget/${chunk}`)).status, chunk).toBe(200);
    });

    it('runs from the bundle, with its demo page and health answering', async () => {
      expect(DOCKERFILE).toMatch(/CMD \[.*"api\/dist\/server\.js"\]/);
      const demo = await fetch(`${url}/`);
      expect(demo.status).toBe(200);
      expect(await demo.text()).toContain('widget/gatehouse.js');
    });
  },
);
