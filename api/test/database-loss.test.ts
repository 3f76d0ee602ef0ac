import { connect, createServer, type Server, type Socket } from 'node:net';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  databaseAvailable,
  freshPostgresDatabase,
  type Json,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
} from './harness.ts';

/*
 * With the database gone, the main API answers 503 `database_unavailable` with
 * Retry-After (never 500 internal_error), /readyz fails so the standby takes over, and the log gets one
 * line when the database goes and one when it returns, never one per request and never SQL text.
 * PostgreSQL is lost for real: the API reaches it through a TCP proxy that the test closes (every open
 * connection cut, new ones refused) and opens again. The embedded database is lost by closing it.
 */
const run = await databaseAvailable();

/** A TCP proxy to PostgreSQL that can be cut (like a host or network loss) and restored on the same port. */
class CuttableProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async open(): Promise<void> {
    const server = createServer((client) => {
      const remote = connect(this.#target.port, this.#target.host);
      for (const s of [client, remote]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          remote.destroy();
        });
      }
      client.pipe(remote).pipe(client);
    });
    server.listen(this.port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /**
   * The database goes silent: new connections are refused, open ones stay open but nothing more crosses
   * them (a host that froze, a network path that drops packets). Queries already on a connection get no
   * answer and no error.
   */
  async blackhole(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) {
      s.unpipe();
      s.pause();
    }
    // Refuses new connections at once; close's callback would wait for the silent ones to end.
    server?.close();
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server?.listening) await new Promise((resolve) => server.close(resolve));
  }
}

describe.runIf(run)(`losing the database (${TEST_DATABASE})`, () => {
  let api: TestApi;
  let proxy: CuttableProxy | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  const lines: Json[] = [];
  let auth: Record<string, string>;
  let appKey: string;
  let passToken: string;

  /** A pass token of the test app, solved as the widget would. */
  async function solvedToken(): Promise<string> {
    const started = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });
    const pow = await solvePuzzle(started.body.data.pow as Puzzle);
    const solved = await api.post('/v1/challenge/submit', {
      app_key: appKey,
      challenge_id: started.body.data.challenge_id,
      challenge: started.body.data.challenge,
      pow,
    });
    expect(solved.body.data.pass_token).toMatch(/^pt_/);
    return solved.body.data.pass_token;
  }
  /** Waits (10 s at most) for /readyz to answer 200 again; the last status seen. */
  async function readyAgain(): Promise<number> {
    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = (await fetch(`${api.url}/readyz`)).status;
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return ready;
  }

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (TEST_DATABASE === 'postgres') {
      const fresh = await freshPostgresDatabase();
      dropDatabase = fresh.drop;
      const url = new URL(fresh.url);
      proxy = new CuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
      await proxy.open();
      url.host = `127.0.0.1:${proxy.port}`;
      env.DATABASE_URL = url.toString();
      env.DB_POOL_MAX = '4';
    }
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    api = await startTestApi(env, logger);
    const created = await api.createApp({ name: 'outage', test_mode: true });
    appKey = created.appKey;
    auth = { 'X-App-Key': created.appKey, 'X-App-Secret': created.appSecret };
    passToken = await solvedToken();
  });
  afterAll(async () => {
    await api?.close();
    await proxy?.cut();
    await dropDatabase?.();
  });

  const expectUnavailable = (res: { status: number; body: Json; headers: Headers }) => {
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: -1, error: 'database_unavailable' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  };

  it('answers 503 database_unavailable with Retry-After everywhere, /readyz fails, and logs the loss once', async () => {
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    const before = lines.length;
    const lostAt = Date.now();
    if (proxy) await proxy.cut();
    else await api.runtime.database.close();
    // App look-ups are cached for 2 s: past that, every request needs the database.
    await new Promise((resolve) => setTimeout(resolve, 2100));

    const challenge = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });
    expectUnavailable(challenge);
    for (let i = 0; i < 5; i++) {
      expectUnavailable(await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' }));
      expectUnavailable(await api.post('/v1/validate', { pass_token: passToken }, auth));
      // An offline_ token is checked only once the app is authenticated, which needs the database.
      expectUnavailable(
        await api.post('/v1/validate', { pass_token: 'offline_eyJhIjoxfQ.AAAAAAAAAAAAAAAAAAAAAA' }, auth),
      );
      expectUnavailable(await api.post('/v1/server/challenge/issue', { action: 'login' }, auth));
      // The vendor-compatible endpoint answers in its vendor's shape, with the same status and Retry-After.
      const vendor = await api.post('/turnstile/v0/siteverify', {
        secret: auth['X-App-Secret'],
        response: passToken,
      });
      expect(vendor.status).toBe(503);
      expect(vendor.body.success).toBe(false);
      expect(Number(vendor.headers.get('retry-after'))).toBeGreaterThan(0);
      const ready = await fetch(`${api.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as Json).error).toBe('database_unavailable');
    }

    // Background writers (the console's usage roll-up flushes every 5 s) stay quiet too.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lostAt + 6000 - Date.now())));
    const logged = lines.slice(before);
    const problems = logged.filter((l) => l.level >= 40);
    expect(problems.map((l) => l.msg)).toEqual([
      'database unreachable: answering 503 database_unavailable until it returns',
    ]);
    const text = JSON.stringify(logged);
    expect(text).not.toMatch(/\b(select|insert into|update|delete from)\b/i);
    expect(text).not.toContain(passToken);
  }, 60_000);

  // The embedded database lives and dies with its process: only a server can come back.
  if (TEST_DATABASE === 'postgres') {
    it('serves again once PostgreSQL returns, logging the return once; the token was not spent meanwhile', async () => {
      const before = lines.length;
      await proxy!.open();
      expect(await readyAgain()).toBe(200);
      const started = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });
      expect(started.status).toBe(200);
      const verdict = await api.post('/v1/validate', { pass_token: passToken }, auth);
      expect(verdict.body.data.valid).toBe(true);
      const messages = lines.slice(before).map((l) => l.msg);
      expect(messages.filter((m) => m === 'database reachable again')).toHaveLength(1);
      expect(lines.slice(before).filter((l) => l.level >= 40)).toEqual([]);
    });

    it('answers 503 to a request already waiting on a connection that went silent, and loses nothing', async () => {
      const token = await solvedToken();
      await proxy!.blackhole();
      // Its claim goes out on a pooled connection and never comes back: no error, no answer. The watchdog
      // must answer it 503 rather than let it wait until the database returns (here, for ever).
      expectUnavailable(await api.post('/v1/validate', { pass_token: token }, auth));
      expectUnavailable(await api.post('/v1/validate', { pass_token: token }, auth));
      expect((await fetch(`${api.url}/readyz`)).status).toBe(503);
      // Back: nothing the silent connection carried reached the database, so the token is still unspent.
      await proxy!.cut();
      await proxy!.open();
      expect(await readyAgain()).toBe(200);
      const verdict = await api.post('/v1/validate', { pass_token: token }, auth);
      expect(verdict.body.data.valid).toBe(true);
    }, 60_000);
  }
});
