import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, DIST } from '../scripts/build-server.ts';
import { plainJsonBodies } from '../src/json-bodies.ts';
import {
  DESKTOP_SIGNALS,
  databaseAvailable,
  freshPostgresDatabase,
  postJson,
  TEST_DATABASE,
} from './harness.ts';
import { type ApiProcess, ROOT, spawnApi, stop } from './start-process.ts';

/*
 * Issue 14, memory: undici (Node's fetch, ~13 MiB resident) was loaded in every API process, which never uses
 * it: by an ES import of node:http (its WebSocket export is a lazy getter; the bundle now takes node:http as
 * CommonJS, api/scripts/build-server.ts) and by Koa, which tests every body against the global `Response`
 * (plainJsonBodies, api/src/json-bodies.ts, sends plain JSON bodies without those tests). The bundled API, as
 * the container runs it, is asked which of Node's modules it loaded after answering JSON; and the same
 * answers, byte for byte, come from Koa with and without plainJsonBodies.
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(url: string, method: string, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => {
        const { date: _date, ...headers } = res.headers;
        resolve({ status: res.statusCode ?? 0, headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Routes that set every kind of body Koa knows, by path. */
function routes(app: Koa): Koa {
  app.use(async (ctx) => {
    switch (ctx.path) {
      case '/object':
        ctx.body = { data: { ok: true, text: 'caf\u00e9 \u2014 \ud83d\ude00', n: [1, 2.5, null] } };
        break;
      case '/array':
        ctx.body = [{ a: 1 }, 'two', 3];
        break;
      case '/status':
        ctx.status = 429;
        ctx.set('Retry-After', '5');
        ctx.body = { error: { code: 'rate_limited' } };
        break;
      case '/typed':
        ctx.type = 'application/problem+json';
        ctx.body = { title: 'typed' };
        break;
      case '/text-typed':
        ctx.type = 'text/plain';
        ctx.body = { forced: 'json' };
        break;
      case '/null-proto':
        ctx.body = Object.assign(Object.create(null), { bare: true });
        break;
      case '/empty':
        ctx.status = 204;
        ctx.body = { dropped: true };
        break;
      case '/null':
        ctx.body = null;
        break;
      case '/string':
        ctx.body = '<p>html</p>';
        break;
      case '/buffer':
        ctx.body = Buffer.from('bytes');
        break;
      case '/stream':
        ctx.body = Readable.from(['a', 'b']);
        break;
      case '/object-then-stream':
        ctx.body = { first: true };
        ctx.body = Readable.from(['streamed']);
        break;
      case '/stream-then-object':
        ctx.body = Readable.from(['never sent']);
        ctx.body = { second: true };
        break;
      case '/class':
        ctx.body = new (class Thing {
          x = 1;
        })();
        break;
      case '/date':
        ctx.body = new Date(0);
        break;
      case '/object-then-string':
        ctx.body = { first: true };
        ctx.body = 'then text';
        break;
      default:
        break;
    }
  });
  return app;
}

const PATHS = [
  '/object',
  '/array',
  '/status',
  '/typed',
  '/text-typed',
  '/null-proto',
  '/empty',
  '/null',
  '/string',
  '/buffer',
  '/stream',
  '/object-then-stream',
  '/stream-then-object',
  '/class',
  '/date',
  '/object-then-string',
  '/missing',
];

describe('plainJsonBodies: the same answers as Koa', () => {
  const servers: ReturnType<Koa['listen']>[] = [];
  let koaUrl = '';
  let oursUrl = '';

  beforeAll(async () => {
    const listen = async (app: Koa) => {
      const server = app.listen(0, '127.0.0.1');
      servers.push(server);
      await once(server, 'listening');
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    koaUrl = await listen(routes(new Koa()));
    oursUrl = await listen(plainJsonBodies(routes(new Koa())));
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  for (const method of ['GET', 'HEAD']) {
    it(`answers ${method} of every kind of body with the same status, headers and bytes`, async () => {
      for (const path of PATHS) {
        const [koa, ours] = [await send(koaUrl, method, path), await send(oursUrl, method, path)];
        expect(ours, `${method} ${path}`).toEqual(koa);
      }
      // The cases above are what they claim to be (a JSON answer, a status kept, a stream replaced).
      const object = await send(oursUrl, 'GET', '/object');
      expect(object.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(object.body).data.text).toBe('caf\u00e9 \u2014 \ud83d\ude00');
      expect((await send(oursUrl, 'GET', '/status')).status).toBe(429);
      expect((await send(oursUrl, 'GET', '/object-then-stream')).body).toBe('streamed');
      expect((await send(oursUrl, 'GET', '/stream-then-object')).body).toBe('{"second":true}');
    });
  }
});

const run = await databaseAvailable();
const ADMIN_TOKEN = 'json-answers-test-admin-token-0123456789';

describe.runIf(run)('the bundled API process answering JSON', () => {
  let dir: string;
  let outdir: string;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let api: ApiProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-json-answers-'));
    // On SIGUSR2 the process writes the names of Node's own modules it loaded that are undici's.
    writeFileSync(
      join(dir, 'report.cjs'),
      `process.on('SIGUSR2', () => require('node:fs').writeFileSync(${JSON.stringify(join(dir, 'loaded.json'))}, ` +
        'JSON.stringify(process.moduleLoadList.filter((m) => /undici/.test(m)))));\n',
    );
    // A folder of its own beside api/dist (server-bundle.test.ts does the same).
    mkdirSync(DIST, { recursive: true });
    outdir = mkdtempSync(join(DIST, 'test-json-'));
    const server = await buildServer(outdir);
    if (TEST_DATABASE === 'postgres') database = await freshPostgresDatabase();
    api = await spawnApi(
      {
        DATA_DIR: join(dir, 'data'),
        GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
        ...(database ? { DATABASE_URL: database.url } : {}),
      },
      ['--no-experimental-strip-types', '--require', join(dir, 'report.cjs'), relative(ROOT, server)],
    );
  }, 120_000);

  afterAll(async () => {
    await stop(api);
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('serves a challenge, a validation and error envelopes without loading undici', async () => {
    const created = await postJson(
      `${api.url}/admin/v1/apps`,
      { name: 'json-answers', test_mode: true },
      { Authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { app_key: key, app_secret: secret } = created.body.data;
    const init = await postJson(`${api.url}/v1/challenge/init`, {
      app_key: key,
      action: 'login',
      signals: DESKTOP_SIGNALS,
    });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    expect(init.body.data.challenge_id).toMatch(/^ch_/);
    const validate = await postJson(
      `${api.url}/v1/validate`,
      { pass_token: 'pt_not-a-token' },
      { 'X-App-Key': key, 'X-App-Secret': secret },
    );
    expect(validate.status).toBeGreaterThanOrEqual(200);
    expect(validate.body).toBeTypeOf('object');
    const unknown = await postJson(`${api.url}/v1/challenge/init`, {
      app_key: 'ak_unknown',
      action: 'login',
    });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.body.error).toBe('invalid_app_key');

    api.child.kill('SIGUSR2');
    const file = join(dir, 'loaded.json');
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([]);
  });
});
