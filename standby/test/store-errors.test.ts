import { mkdtempSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { REDIS_URL, redisAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/** A port nothing listens on: bound, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const withRedis = await redisAvailable('the store recovery test');

/*
 * With its store unreachable, ioredis retries forever; without an 'error' listener it prints
 * "[ioredis] Unhandled error event" to stderr at every attempt. The standby logs the loss once, through
 * its own logger, and stays not ready (fail closed). No Redis needed: the point is that nothing answers.
 */
describe('the standby with its store unreachable', () => {
  let api: TestApi;
  let standby: RunningStandby;
  const lines: { msg: string; level: number; err?: string }[] = [];
  const stderr: string[] = [];
  let port: number;
  let proxy: Server | undefined;

  beforeAll(async () => {
    api = await startTestApi();
    const capture = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    // ioredis reports an unhandled error event with console.error.
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      stderr.push(args.map(String).join(' '));
    });
    port = await closedPort();
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-store-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        STANDBY_STORE_URL: `redis://:s3cret-password@127.0.0.1:${port}/0`,
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { logger: pino({ level: 'info' }, capture) },
    );
  }, 60_000);
  afterAll(async () => {
    await standby?.close();
    proxy?.close();
    await api?.close();
    vi.restoreAllMocks();
  });

  it('logs the loss once as a warning, never an unhandled error event, and stays not ready', async () => {
    // ioredis retries after 50, 100, 150... ms: well over five attempts in 2 s.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await fetch(`${standby.urls.bypass}/readyz`)).status).toBe(503);
    expect(stderr.filter((l) => l.includes('Unhandled error event'))).toEqual([]);
    const storeLines = lines.filter((l) => /store/i.test(l.msg));
    expect(storeLines).toHaveLength(1);
    expect(storeLines[0]).toMatchObject({ level: 40, msg: expect.stringMatching(/store unreachable/) });
    expect(storeLines[0]?.err).toMatch(/ECONNREFUSED/);
    // The store URL (and its password) is never logged.
    expect(JSON.stringify(lines)).not.toContain('s3cret-password');
  });

  it.runIf(withRedis)(
    'when the store comes back it logs that once, and the standby is ready again',
    async () => {
      // Real Redis behind a plain TCP relay on the port that was closed.
      const target = new URL(REDIS_URL);
      proxy = createServer((client) => {
        const upstream = connect(Number(target.port || 6379), target.hostname);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      await new Promise<void>((resolve) => proxy?.listen(port, '127.0.0.1', resolve));
      const deadline = Date.now() + 10_000;
      while (!lines.some((l) => l.msg === 'standby store reachable again') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      expect(lines.filter((l) => /store/i.test(l.msg)).map((l) => [l.level, l.msg])).toEqual([
        [40, expect.stringMatching(/store unreachable/)],
        [30, 'standby store reachable again'],
      ]);
      expect(stderr.filter((l) => l.includes('Unhandled error event'))).toEqual([]);
      expect((await fetch(`${standby.urls.bypass}/readyz`)).status).toBe(200);
    },
    20_000,
  );
});
