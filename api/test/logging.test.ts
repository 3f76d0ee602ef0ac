import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_CI, startTestApi, TEST_DATABASE, type TestApi } from './harness.ts';

/*
 * What a person running Gatehouse reads: probes out of the info log, readable lines in a terminal and
 * JSON in a pipe. The terminal is a real pseudo-terminal (util-linux `script`), not a flag.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SERVER = join(ROOT, 'api', 'src', 'server.ts');

describe('request log', () => {
  let api: TestApi;
  const lines: { level: number; path?: string; msg: string }[] = [];

  beforeAll(async () => {
    const capture = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    api = await startTestApi({}, pino({ level: 'info' }, capture));
  });
  afterAll(() => api?.close());

  it('does not log health probes and metric scrapes at info, but logs other requests', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/livez']) await fetch(api.url + path);
    await fetch(`${api.url}/openapi.json`);
    const logged = lines.filter((l) => l.msg === 'request').map((l) => l.path);
    expect(logged).toContain('/openapi.json');
    for (const probe of ['/healthz', '/readyz', '/metrics']) expect(logged).not.toContain(probe);
  });

  it("does not log the standby's syncs at info: its snapshot and its copy of the widget", async () => {
    const before = lines.length;
    await fetch(`${api.url}/internal/v1/standby/snapshot`);
    await fetch(`${api.url}/widget/gatehouse.js`, {
      headers: { 'user-agent': 'gatehouse-standby (widget copy)' },
    });
    await fetch(`${api.url}/widget/gatehouse.js`, { headers: { 'user-agent': 'Mozilla/5.0' } });
    await fetch(`${api.url}/openapi.json`);
    await new Promise((r) => setImmediate(r));
    const logged = lines
      .slice(before)
      .filter((l) => l.msg === 'request')
      .map((l) => l.path);
    // A browser's widget request is logged; the sync's are not.
    expect(logged).toEqual(['/widget/gatehouse.js', '/openapi.json']);
  });

  it('still logs probes at debug', async () => {
    const debug: string[] = [];
    const capture = new Writable({
      write(chunk, _encoding, done) {
        debug.push(String(chunk));
        done();
      },
    });
    const verbose = await startTestApi({}, pino({ level: 'debug' }, capture));
    try {
      await fetch(`${verbose.url}/readyz`);
      expect(debug.join('')).toContain('"path":"/readyz"');
    } finally {
      await verbose.close();
    }
  });
});

/** Runs the API in `cwd` with stdout a terminal (through `script`) or a pipe; collects its output. */
function startServer(tty: boolean, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: '0',
    DATA_DIR: dir,
    PGLITE_DIR: 'memory://',
    LOG_LEVEL: 'info',
    TERM: 'dumb',
    ...env,
  };
  const child: ChildProcess = tty
    ? spawn(
        'script',
        ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(SERVER)}`, '/dev/null'],
        {
          env: fullEnv,
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      )
    : spawn(process.execPath, [SERVER], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((found, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} in 60 s:\n${output}`)), 60_000);
      const check = () => {
        const m = pattern.exec(output);
        if (!m) return;
        clearTimeout(timer);
        child.stdout!.off('data', check);
        found(m);
      };
      child.stdout!.on('data', check);
      check();
    });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // Under `script` the server is the child's child: a terminal hang-up and TERM reach both.
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { output: () => output, waitFor, stop };
}

const scriptAvailable = (() => {
  if (existsSync('/usr/bin/script')) return true;
  const message = 'util-linux `script` is not installed: the terminal log test cannot run.';
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
})();

// The format does not depend on the database: once, in the embedded-database project, is enough.
describe.runIf(TEST_DATABASE === 'pglite')('log format', { timeout: 90_000 }, () => {
  it.runIf(scriptAvailable)('is readable in a terminal: no JSON, a level word and the message', async () => {
    const server = startServer(true, {});
    try {
      const [, url] = await server.waitFor(/Gatehouse API:\s+(http:\/\/[\w.:]+)/);
      await fetch(`${url}/readyz`);
      await fetch(`${url}/openapi.json`);
      await server.waitFor(/\/openapi\.json/);
      const out = server.output();
      expect(out).toMatch(/INFO[^\n]*gatehouse api listening/);
      // One line a request: its method, path, status and duration after the message.
      expect(out).toMatch(/INFO[^\n]*request GET \/openapi\.json 200 [\d.]+ ms/);
      expect(out).not.toMatch(/^\s+(reqId|method|path|status):/m);
      expect(out).not.toMatch(/^\{"level":/m);
      expect(out).not.toContain('/readyz');
    } finally {
      await server.stop();
    }
  });

  it('is JSON, one object a line, when stdout is not a terminal', async () => {
    const server = startServer(false, {});
    try {
      const [line] = await server.waitFor(/^\{[^\n]*"gatehouse api listening"[^\n]*\}$/m);
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ level: 30, msg: 'gatehouse api listening' });
    } finally {
      await server.stop();
    }
  });

  it('LOG_FORMAT=pretty forces readable lines into a pipe', async () => {
    const server = startServer(false, { LOG_FORMAT: 'pretty' });
    try {
      await server.waitFor(/INFO[^\n]*gatehouse api listening/);
      expect(server.output()).not.toMatch(/^\{"level":/m);
    } finally {
      await server.stop();
    }
  });
});
