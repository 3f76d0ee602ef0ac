import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { sendJson } from '@gatehouse/core/http';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, DIST } from '../scripts/build-server.ts';
import {
  DESKTOP_SIGNALS,
  databaseAvailable,
  freshPostgresDatabase,
  postJson,
  TEST_DATABASE,
} from './harness.ts';
import { type ApiProcess, ROOT, spawnApi, stop } from './start-process.ts';

/*
 * Undici (Node's fetch implementation) must not be loaded in an API process, which never uses it: an ES
 * import of node:http would load it (its WebSocket export is a lazy getter; the bundle takes node:http as
 * CommonJS, api/scripts/build-server.ts), and so would Koa, which tests every object body against the global
 * `Response` (answers are sent as JSON text instead: sendJson, api/src/route-table.ts). The bundled API, as
 * the container runs it, is asked which of Node's modules it loaded after answering JSON; and sendJson's
 * answers are, byte for byte, Koa's own for the same values.
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

/** Answers set as Koa's own JSON body (`ctx.body = value`) or as JSON text (`sendJson`), by path. */
function routes(app: Koa, answer: (ctx: Koa.Context, value: unknown) => void): Koa {
  app.use(async (ctx) => {
    switch (ctx.path) {
      case '/object':
        answer(ctx, { data: { ok: true, text: 'caf\u00e9 \u2014 \ud83d\ude00', n: [1, 2.5, null] } });
        break;
      case '/array':
        answer(ctx, [{ a: 1 }, 'two', 3]);
        break;
      case '/status':
        ctx.status = 429;
        ctx.set('Retry-After', '5');
        answer(ctx, { error: { code: 'rate_limited' } });
        break;
      case '/created':
        ctx.status = 201;
        answer(ctx, { code: 0, data: { made: true } });
        break;
      default:
        break;
    }
  });
  return app;
}

const PATHS = ['/object', '/array', '/status', '/created', '/missing'];

describe("sendJson: the same answers as Koa's JSON bodies", () => {
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
    koaUrl = await listen(
      routes(new Koa(), (ctx, value) => {
        ctx.body = value;
      }),
    );
    oursUrl = await listen(routes(new Koa(), sendJson));
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  for (const method of ['GET', 'HEAD']) {
    it(`answers ${method} with the same status, headers and bytes`, async () => {
      for (const path of PATHS) {
        const [koa, ours] = [await send(koaUrl, method, path), await send(oursUrl, method, path)];
        expect(ours, `${method} ${path}`).toEqual(koa);
      }
      // The cases above are what they claim to be (a JSON answer, a status kept).
      const object = await send(oursUrl, 'GET', '/object');
      expect(object.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(object.body).data.text).toBe('caf\u00e9 \u2014 \ud83d\ude00');
      expect((await send(oursUrl, 'GET', '/status')).status).toBe(429);
      expect((await send(oursUrl, 'GET', '/created')).status).toBe(201);
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
