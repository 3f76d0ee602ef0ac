import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildServer, DIST } from '../scripts/build-server.ts';
import {
  DESKTOP_CHROME,
  DESKTOP_SIGNALS,
  databaseAvailable,
  freshPostgresDatabase,
  postJson,
  REDIS_URL,
  redisAvailable,
  TEST_DATABASE,
} from './harness.ts';
import { type ApiProcess, ROOT, spawnApi, stop } from './start-process.ts';

/*
 * The API as the container runs it (the Dockerfile's api target): the esbuild bundle `api/dist/server.js` started by
 * plain node, over real HTTP, on the embedded database (pglite project) or PostgreSQL (postgres project).
 * Node runs it with type stripping off, so a module of ours left out of the bundle (a TypeScript file
 * loaded at run time, which would bring the type stripper's memory back) fails the start or the request.
 */
const run = TEST_DATABASE === 'pglite' || (await databaseAvailable());
const ADMIN_TOKEN = 'bundle-test-admin-token-0123456789';

describe.runIf(run)('the bundled API (npm run build -w @gatehouse/api)', () => {
  let outdir: string;
  let dataDir: string;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let api: ApiProcess;

  beforeAll(async () => {
    // A folder of its own beside api/dist, so parallel runs and a developer's build never collide.
    mkdirSync(DIST, { recursive: true });
    outdir = mkdtempSync(join(DIST, 'test-'));
    const server = await buildServer(outdir);
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bundle-'));
    if (TEST_DATABASE === 'postgres') database = await freshPostgresDatabase();
    api = await spawnApi(
      {
        DATA_DIR: dataDir,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
        ...(database ? { DATABASE_URL: database.url } : {}),
        // On PostgreSQL with Redis too: the bundle loads ioredis on demand, from a chunk of its own.
        ...(database && (await redisAvailable('the bundled API on Redis')) ? { REDIS_URL } : {}),
      },
      [
        '--no-experimental-strip-types',
        '--max-semi-space-size=8',
        '--max-old-space-size=256',
        relative(ROOT, server),
      ],
    );
  }, 120_000);

  afterAll(async () => {
    await stop(api);
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  async function createApp(settings: object): Promise<{ key: string; auth: Record<string, string> }> {
    const res = await postJson(`${api.url}/admin/v1/apps`, settings, {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { app_key: key, app_secret: secret } = res.body.data;
    return { key, auth: { 'X-App-Key': key, 'X-App-Secret': secret } };
  }

  it('passes a challenge: init, proof-of-work, submit, then validates the pass token once', async () => {
    const app = await createApp({ name: 'bundle', test_mode: true });
    const started = await postJson(
      `${api.url}/v1/challenge/init`,
      { app_key: app.key, action: 'login', signals: DESKTOP_SIGNALS },
      DESKTOP_CHROME,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data.tier).toBe('invisible');
    const pow = await solvePuzzle(started.body.data.pow as Puzzle);
    const solved = await postJson(`${api.url}/v1/challenge/submit`, {
      app_key: app.key,
      challenge_id: started.body.data.challenge_id,
      challenge: started.body.data.challenge,
      pow,
    });
    expect(solved.status, JSON.stringify(solved.body)).toBe(200);
    const token = solved.body.data.pass_token as string;
    expect(token).toMatch(/^pt_/);

    const verdict = await postJson(`${api.url}/v1/validate`, { pass_token: token }, app.auth);
    expect(verdict.status).toBe(200);
    expect(verdict.body.data).toMatchObject({ valid: true, action: 'login' });
    const replay = await postJson(`${api.url}/v1/validate`, { pass_token: token }, app.auth);
    expect(replay.body).toMatchObject({ code: -1, error: 'token_already_used' });
  });

  it('is ASCII only, so V8 holds each module source at one byte per character', () => {
    const files = readdirSync(outdir).filter((file) => file.endsWith('.js'));
    expect(files).toContain('image-worker.js');
    for (const file of files) {
      const code = readFileSync(join(outdir, file), 'utf8');
      const found = code.match(/[\u0080-\uffff]/g) ?? [];
      expect(found, `${file}: ${[...new Set(found)].join(' ')}`).toEqual([]);
    }
  });

  it('serves its OpenAPI document (built on the first request)', async () => {
    const res = await fetch(`${api.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toContain('/v1/validate');
  });

  it('serves image challenges drawn by the bundled worker thread', async () => {
    const app = await createApp({
      name: 'bundle-slide',
      risk_policy: { invisible_below: 0, image_below: 101, image_kinds: ['slide'] },
    });
    // The worker starts with the first image init; until its first render a take may be shed (503).
    await vi.waitFor(
      async () => {
        const res = await postJson(
          `${api.url}/v1/challenge/init`,
          { app_key: app.key, action: 'login', signals: DESKTOP_SIGNALS },
          DESKTOP_CHROME,
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.data.tier).toBe('image');
        expect(res.body.data.image.view).toBeTruthy();
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(api.output()).not.toMatch(/image worker|ERR_/i);
  }, 90_000);
});
