import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSettings } from '../src/apps/settings.ts';
import { bootstrap, type Runtime } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { mintPassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';
import { type ApiProcess, spawnApi, stop } from './start-process.ts';

/*
 * Invariant 1 across processes: one pass token, 200 concurrent validations split over two real API
 * processes on one PostgreSQL database, exactly one success.
 *
 * Runs in the `postgres` vitest project only. Skipping it in the `pglite` project is a project selection,
 * not a missing tool: PGlite is an in-process database that two processes cannot share. A missing
 * PostgreSQL is handled by databaseAvailable() (loud skip outside CI, failure under CI=true).
 */
const CONCURRENT = 200;

const run = TEST_DATABASE === 'postgres' && (await databaseAvailable());

/** The spec's envelope: `code: 0` with `data`, or `code: -1` with `error` and `message`. */
type Envelope = { code: number; error?: string; message?: string; data?: Record<string, unknown> };

describe.runIf(run)('concurrent validation across two API processes', () => {
  let database: { url: string; drop: () => Promise<void> };
  let runtime: Runtime;
  let dataDir: string;
  const apis: ApiProcess[] = [];
  let headers: Record<string, string>;
  let appId: string;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-concurrent-'));
    // Migrate and create the token key here first, so the two processes start on a ready database and
    // share the key stored in it (no GATEHOUSE_TOKEN_KEY).
    runtime = await bootstrap(
      loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
    );
    const { app, secret } = await runtime.apps.create(appSettings.parse({ name: 'concurrent' }));
    appId = app.id;
    headers = { 'content-type': 'application/json', 'X-App-Key': app.appKey, 'X-App-Secret': secret };
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    apis.push(...(await Promise.all([spawnApi(env), spawnApi(env)])));
  });

  afterAll(async () => {
    await Promise.all(apis.map(stop));
    await runtime?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function validate(url: string, passToken: string): Promise<{ status: number; body: Envelope }> {
    const res = await fetch(`${url}/v1/validate`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ pass_token: passToken }),
    });
    return { status: res.status, body: (await res.json()) as Envelope };
  }

  it(`accepts one token exactly once among ${CONCURRENT} concurrent validations`, async () => {
    const app = (await runtime.apps.findById(appId))!;
    const token = await mintPassToken(runtime.db, runtime.keys, {
      app,
      challengeId: 'ch_concurrent',
      action: 'login',
      captchaArgs: {
        platform: 'web',
        user_ip: '203.0.113.9',
        referer: null,
        pkg: null,
        solved_at: Math.floor(Date.now() / 1000),
        risk_score: 5,
      },
    });

    // Warm both processes (app look-up cached, connections open) with a token they must refuse, so the
    // 200 requests below reach the consuming UPDATE together.
    const forged = `${token.slice(0, token.indexOf('.') + 1)}${'A'.repeat(22)}`;
    for (const api of apis) {
      const warm = await validate(api.url, forged);
      expect(warm.status).toBe(200);
      expect(warm.body).toMatchObject({ code: -1, error: 'token_not_found' });
    }

    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => validate(apis[i % 2]!.url, token)),
    );

    // Every answer is a verdict (HTTP 200): one valid, every other one token_already_used.
    expect(results.every((r) => r.status === 200)).toBe(true);
    const valid = results.filter((r) => r.body.code === 0);
    const used = results.filter((r) => r.body.error === 'token_already_used');
    expect(valid).toHaveLength(1);
    expect(valid[0]!.body).toMatchObject({
      code: 0,
      data: { valid: true, action: 'login', challenge_id: 'ch_concurrent' },
    });
    expect(used).toHaveLength(CONCURRENT - 1);
    for (const r of used) expect(r.body).toMatchObject({ code: -1, error: 'token_already_used' });

    // Both processes are still up and answering.
    for (const api of apis) {
      const res = await fetch(`${api.url}/healthz`);
      expect(res.status, api.output()).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
      expect(api.child.exitCode).toBeNull();
    }
  });
});
