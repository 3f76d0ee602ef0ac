import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatehouseError } from '@gatehouse/core/errors';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import postgres from 'postgres';
import { createApp } from '../src/app.ts';
import type { AppSettingsInput } from '../src/apps/settings.ts';
import { appSettings } from '../src/apps/settings.ts';
import { type BootstrapOptions, bootstrap, type Runtime } from '../src/bootstrap.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { type ApiServer, startApiServer } from '../src/server.ts';
import { mintPassToken } from '../src/tokens/pass-tokens.ts';

/**
 * Test harness: a real API listening on an ephemeral port, on the database the vitest project names
 * (PGlite in memory, or a fresh database on the real PostgreSQL at TEST_POSTGRES_URL).
 */
export const TEST_DATABASE = (process.env.TEST_DATABASE ?? 'pglite') as 'pglite' | 'postgres';
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const IN_CI = process.env.CI === 'true';

let postgresReachable: Promise<boolean> | undefined;

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Whether this project's database can run here. A missing PostgreSQL skips with a loud message outside
 * CI and throws under CI=true, so CI can never pass by skipping.
 */
export async function databaseAvailable(): Promise<boolean> {
  if (TEST_DATABASE === 'pglite') return true;
  postgresReachable ??= reachable(POSTGRES_URL);
  if (await postgresReachable) return true;
  const message = `PostgreSQL is not reachable at ${POSTGRES_URL}: the postgres test project cannot run (start it with .ci/run).`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
}

/**
 * Whether Redis answers at REDIS_URL; `what` says which tests need it. Absent: a loud skip outside CI, a
 * failure under CI=true.
 */
export async function redisAvailable(what: string): Promise<boolean> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    const message = `Redis is not reachable at ${REDIS_URL}: ${what} cannot run (start it with .ci/run).`;
    if (IN_CI) throw new Error(message);
    console.warn(`\n!!! SKIPPING: ${message}\n`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** A fresh, empty database URL on the test PostgreSQL; dropped by the returned cleanup. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const again = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/** A parsed JSON answer, loosely typed so tests can read it field by field. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers field by field.
export type Json = any;

/** POST with JSON in and out (a string body is sent as it is); a body that is not JSON comes back as text. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The failed-authentication defaults of docs/security.md, for the suites that must reach them. */
export const AUTH_THROTTLE_DEFAULTS: Record<string, string> = {
  AUTH_FAILURE_WINDOW_SECONDS: '60',
  AUTH_FAILURES_PER_SOURCE_AND_KEY: '10',
  AUTH_FAILURES_PER_SOURCE: '30',
  AUTH_FAILURES_PER_KEY: '100',
};

/** Failed-authentication limits no test reaches by accident. */
export const NO_AUTH_THROTTLE: Record<string, string> = {
  AUTH_FAILURES_PER_SOURCE_AND_KEY: '1000000',
  AUTH_FAILURES_PER_SOURCE: '1000000',
  AUTH_FAILURES_PER_KEY: '1000000',
  AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP: '1000000',
};

export interface TestApi {
  url: string;
  runtime: Runtime;
  config: Config;
  /** Creates an app through the repository; returns its key and the secret shown once. */
  createApp(
    settings?: Partial<AppSettingsInput>,
  ): Promise<{ appKey: string; appSecret: string; appId: string }>;
  /** fetch() against the API with JSON in and out. */
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json; headers: Headers }>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a real API on an ephemeral port for one test file; silent unless given a logger. */
export async function startTestApi(
  env: Record<string, string> = {},
  logger?: Logger,
  options: BootstrapOptions = {},
): Promise<TestApi> {
  let drop: (() => Promise<void>) | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const dbEnv: Record<string, string> = {};
  if (TEST_DATABASE === 'postgres') {
    const fresh = await freshPostgresDatabase();
    dbEnv.DATABASE_URL = fresh.url;
    drop = fresh.drop;
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    PGLITE_DIR: 'memory://',
    PORT: '0',
    LOG_LEVEL: 'silent',
    // Suites send thousands of deliberate authentication failures from one address: only the suite
    // about throttling (auth-throttle.test.ts) sets the real limits.
    ...NO_AUTH_THROTTLE,
    ...dbEnv,
    ...env,
  });
  const runtime = await bootstrap(config, logger ?? pino({ level: 'silent' }), options);
  const koa = createApp(runtime);
  let server = koa.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const stopListening = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return {
    url,
    runtime,
    config,
    /** Stops answering (the port refuses connections) while the runtime and its database stay up. */
    pause: stopListening,
    /** Answers again on the same port. */
    async resume() {
      server = koa.listen(port, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
    },
    async createApp(settings = {}) {
      const { app, secret } = await runtime.apps.create(appSettings.parse({ name: 'test', ...settings }));
      return { appKey: app.appKey, appSecret: secret, appId: app.id };
    },
    post: (path, body, headers = {}) => postJson(url + path, body, headers),
    async close() {
      if (server.listening) await stopListening();
      await runtime.close();
      await drop?.();
    },
  };
}

/** Headers of an ordinary desktop Chrome: with `DESKTOP_SIGNALS`, from a home address, it scores the base score. */
export const DESKTOP_CHROME = {
  'User-Agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Accept-Language': 'en-GB,en;q=0.9',
  'Sec-CH-UA': '"Chromium";v="131", "Not_A Brand";v="24"',
  'Sec-CH-UA-Mobile': '?0',
  'Sec-CH-UA-Platform': '"Linux"',
};
export const DESKTOP_SIGNALS = { webdriver: false, languages: ['en-GB'], screen: { w: 1440, h: 900 } };

/** A pass token for `appId`, minted straight into the database (a `login` solved from 203.0.113.7). */
export async function mintLoginToken(api: TestApi, appId: string, challengeId: string): Promise<string> {
  const app = await api.runtime.apps.findById(appId);
  if (!app) throw new Error(`no app ${appId}`);
  return mintPassToken(api.runtime.db, api.runtime.keys, {
    app,
    challengeId,
    action: 'login',
    captchaArgs: {
      platform: 'web',
      user_ip: '203.0.113.7',
      referer: null,
      pkg: null,
      solved_at: 0,
      risk_score: 0,
    },
  });
}

/** A validation's verdict: 'valid', or the code of the GatehouseError it was refused with. */
export async function verdictOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'valid';
  } catch (error) {
    if (error instanceof GatehouseError) return error.code;
    throw error;
  }
}

/**
 * The API as `server.ts` starts it (listening, the internal port and HTTP deadlines included), on a fresh
 * database of the suite's kind: for the suites about what only the real server does. `env` adds to
 * an on-disk data folder, an in-memory PGlite, port 0 and silent logs.
 */
export async function startRealApiServer(
  env: Record<string, string>,
): Promise<{ api: ApiServer; close: () => Promise<void> }> {
  const full: Record<string, string> = {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-server-')),
    PGLITE_DIR: 'memory://',
    PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  };
  let drop: (() => Promise<void>) | undefined;
  if (TEST_DATABASE === 'postgres') {
    const fresh = await freshPostgresDatabase();
    full.DATABASE_URL = fresh.url;
    drop = fresh.drop;
  }
  const api = await startApiServer(loadConfig(full));
  return {
    api,
    close: async () => {
      await api.close();
      await drop?.();
    },
  };
}

export interface Answer {
  status: number;
  body: Json;
}

/**
 * POSTs JSON (or, with `method: 'GET'` and no body, GETs) from a chosen local address (any 127.0.0.x stands
 * for another client), with headers sent as given (repeated ones as separate lines).
 */
export function postFrom(
  localAddress: string,
  url: string,
  body: unknown,
  headers: Record<string, string | string[]> = {},
  method: 'POST' | 'GET' = 'POST',
): Promise<Answer> {
  const payload = method === 'GET' ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
