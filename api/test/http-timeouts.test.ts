import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningStandby, startStandby } from '@gatehouse/standby';
import { loadStandbyConfig } from '@gatehouse/standby/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { type ApiServer, startApiServer } from '../src/server.ts';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';

/*
 * The listeners of the main API and of the standby close slow clients on our own deadlines
 * (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS) and cap open connections
 * (HTTP_MAX_CONNECTIONS), so clients trickling a header cannot hold connections open for long. Real
 * sockets against the real servers (`startApiServer`, `startStandby`), with short deadlines so the test
 * is quick.
 */
const run = await databaseAvailable();

const LIMITS = {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_REQUEST_TIMEOUT_MS: '2000',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
  HTTP_MAX_CONNECTIONS: '64',
};
/** Room past a deadline for the check interval (a tenth of the shortest deadline) and a busy CI machine. */
const SLACK_MS = 3000;

interface Outcome {
  /** Milliseconds from the first byte written to the connection closing; Infinity if still open at `waitMs`. */
  closedAfterMs: number;
  response: string;
}

/** Opens a socket, writes `first`, then one more byte every `everyMs` until the server closes it or `waitMs` passes. */
async function trickle(url: string, first: string, everyMs: number, waitMs: number): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  let response = '';
  socket.on('data', (chunk) => {
    response += chunk;
  });
  const started = performance.now();
  socket.write(first);
  const drip = setInterval(() => socket.writable && socket.write('a'), everyMs);
  // Not events.once: it rejects on 'error', and a server cutting a connection may reset it.
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(performance.now() - started)),
  );
  const outcome = await Promise.race([
    closed,
    new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), waitMs)),
  ]);
  clearInterval(drip);
  socket.destroy();
  return { closedAfterMs: outcome, response };
}

const slowHeader = (url: string, waitMs: number) =>
  trickle(url, 'GET /healthz HTTP/1.1\r\nHost: gatehouse.test\r\nX-Slow: ', 200, waitMs);

describe.runIf(run)(`HTTP deadlines and connection cap (${TEST_DATABASE})`, () => {
  let api: ApiServer;
  let standby: RunningStandby;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const env: Record<string, string> = {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-http-')),
      PGLITE_DIR: 'memory://',
      PORT: '0',
      LOG_LEVEL: 'silent',
      GATEHOUSE_ADMIN_TOKEN: 'at_http-timeouts-test-admin-token',
      ...LIMITS,
    };
    if (TEST_DATABASE === 'postgres') {
      const fresh = await freshPostgresDatabase();
      env.DATABASE_URL = fresh.url;
      drop = fresh.drop;
    }
    api = await startApiServer(loadConfig(env));
    standby = await startStandby(
      loadStandbyConfig({
        ...LIMITS,
        STANDBY_ROLE: 'both',
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        MAIN_API_URL: api.url,
        STANDBY_DATA_DIR: join(env.DATA_DIR!, 'standby'),
        STANDBY_SYNC_TOKEN: env.GATEHOUSE_ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
      }),
    );
  });
  afterAll(async () => {
    await standby?.close();
    await api?.close(1000);
    await drop?.();
  });

  it('20 connections trickling a header to the API are answered 408 and closed within the header deadline', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => slowHeader(api.url, 8000)));
    for (const o of outcomes) {
      expect(o.closedAfterMs).toBeLessThan(1000 + SLACK_MS);
      expect(o.closedAfterMs).toBeGreaterThanOrEqual(900);
      expect(o.response).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it('a body trickled after complete headers is cut at the request deadline', async () => {
    const head =
      'POST /v1/challenge/init HTTP/1.1\r\nHost: gatehouse.test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{';
    const o = await trickle(api.url, head, 200, 8000);
    expect(o.closedAfterMs).toBeLessThan(2000 + SLACK_MS);
    expect(o.closedAfterMs).toBeGreaterThanOrEqual(1900);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const { hostname, port } = new URL(api.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.write('GET /healthz HTTP/1.1\r\nHost: gatehouse.test\r\n\r\n');
    await once(socket, 'data');
    const idleFrom = performance.now();
    await Promise.race([
      new Promise((resolve) => socket.once('close', resolve)),
      new Promise((resolve) => setTimeout(resolve, 8000)),
    ]);
    const idleMs = performance.now() - idleFrom;
    socket.destroy();
    // Node keeps the socket `keepAliveTimeoutBuffer` (1 s) past the advertised keep-alive timeout.
    expect(idleMs).toBeLessThan(1000 + 1000 + SLACK_MS);
    expect(idleMs).toBeGreaterThanOrEqual(900);
  });

  it('both standby roles close a trickling header within the same deadline', async () => {
    for (const url of [standby.urls.bypass!, standby.urls.fallback!]) {
      const o = await slowHeader(url, 8000);
      expect(o.closedAfterMs).toBeLessThan(1000 + SLACK_MS);
      expect(o.response).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it('connections beyond HTTP_MAX_CONNECTIONS are closed at once, and the API serves again when they go', async () => {
    const { hostname, port } = new URL(api.url);
    const held: Socket[] = [];
    for (let i = 0; i < 64; i++) {
      const s = connect(Number(port), hostname);
      s.on('error', () => {});
      await once(s, 'connect');
      held.push(s);
    }
    // Give the server a moment to register all 64 before the 65th arrives.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const extra = await trickle(
      api.url,
      'GET /healthz HTTP/1.1\r\nHost: gatehouse.test\r\n\r\n',
      10_000,
      3000,
    );
    expect(extra.closedAfterMs).toBeLessThan(1000);
    expect(extra.response).toBe('');
    for (const s of held) s.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  });
});
