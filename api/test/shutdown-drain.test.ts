import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';
import { spawnApi } from './start-process.ts';

/**
 * `node api/src/server.ts` stopped by SIGTERM with SHUTDOWN_DRAIN_MS: it keeps answering for the drain,
 * each answer with `Connection: close` (a kept-alive client reconnects, elsewhere once the platform has
 * taken this instance out of rotation), then stops listening and exits 0. SIGINT stops at once.
 */

const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const drop of drops) await drop();
});

/** `node api/src/server.ts` with `env` on a database of its own; `exited` resolves with its exit code. */
async function startServer(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-drain-'));
  dirs.push(dataDir);
  const database: Record<string, string> = {};
  if (TEST_DATABASE === 'postgres') {
    const fresh = await freshPostgresDatabase();
    drops.push(fresh.drop);
    database.DATABASE_URL = fresh.url;
  }
  const { child, url } = await spawnApi({ DATA_DIR: dataDir, PGLITE_DIR: 'memory://', ...database, ...env });
  const exited = once(child, 'exit') as Promise<[number | null]>;
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
