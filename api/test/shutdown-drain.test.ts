import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';

/**
 * `node api/src/server.ts` stopped by SIGTERM with SHUTDOWN_DRAIN_MS: it keeps answering for the drain,
 * each answer with `Connection: close` (a kept-alive client reconnects, elsewhere once the platform has
 * taken this instance out of rotation), then stops listening and exits 0. SIGINT stops at once.
 */

const SERVER = resolve(import.meta.dirname, '../src/server.ts');
const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const drop of drops) await drop();
});

async function startServer(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-drain-'));
  dirs.push(dataDir);
  const { DATABASE_URL: _db, ...inherited } = process.env;
  const database: Record<string, string> = {};
  if (TEST_DATABASE === 'postgres') {
    const fresh = await freshPostgresDatabase();
    drops.push(fresh.drop);
    database.DATABASE_URL = fresh.url;
  }
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...inherited,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      PGLITE_DIR: 'memory://',
      ...database,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('the API did not start in 90 s')), 90_000);
    child.once('exit', (code) => fail(new Error(`the API exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'gatehouse api listening' && entry.url) {
          clearTimeout(timer);
          done(entry.url);
        }
      } catch {}
    });
  });
  return { child, url, exited };
}

/** GET on a kept-alive agent: the status and the Connection header of the answer. */
function get(url: string, agent: Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((done, fail) => {
    request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    })
      .on('error', fail)
      .end();
  });
}

describe.runIf(await databaseAvailable())('SIGTERM with SHUTDOWN_DRAIN_MS', () => {
  it('answers through the drain, each answer closing its connection, then exits 0', async () => {
    const { child, url, exited } = await startServer({ SHUTDOWN_DRAIN_MS: '1500' });
    const agent = new Agent({ keepAlive: true });
    expect((await get(`${url}/healthz`, agent)).connection).toBe('keep-alive');
    const signalled = Date.now();
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // The kept-alive connection still answers, and says it closes; so does a new one.
    expect(await get(`${url}/healthz`, agent)).toEqual({ status: 200, connection: 'close' });
    expect(await get(`${url}/healthz`, agent)).toEqual({ status: 200, connection: 'close' });
    const [code] = await exited;
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1500);
    await expect(get(`${url}/healthz`, agent)).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  }, 120_000);

  it('SIGINT stops at once, whatever the drain', async () => {
    const { child, exited } = await startServer({ SHUTDOWN_DRAIN_MS: '30000' });
    const signalled = Date.now();
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(15_000);
  }, 120_000);
});
