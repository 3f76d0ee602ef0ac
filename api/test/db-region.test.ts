import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REGIONAL_TABLES } from '@gatehouse/core/db';
import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSettings } from '../src/apps/settings.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { databaseAvailable, freshPostgresDatabase, type Json, postJson, TEST_DATABASE } from './harness.ts';
import { type ApiProcess, ROOT, spawnApi, stop } from './start-process.ts';

/*
 * GATEHOUSE_DB_REGION: rows homed in the API's own region (REGIONAL BY ROW `crdb_region` on CockroachDB).
 *
 * There is no CockroachDB here (its licence rules it out). A test-only schema stands in for it: the
 * regional tables get a plain `crdb_region text` column, as CockroachDB adds a hidden `crdb_region` to a
 * table made REGIONAL BY ROW. Two real API processes with different regions then serve real HTTP on one
 * PostgreSQL database, and each row must carry the region of the process that wrote it. What this cannot
 * show: CockroachDB's own enum type, `SHOW REGIONS` check and row placement (docs/operator.md).
 *
 * Runs in the `postgres` vitest project only (two processes cannot share PGlite).
 */
const run = TEST_DATABASE === 'postgres' && (await databaseAvailable());

const REGIONS = ['europe-west1', 'us-east1'] as const;

describe.runIf(run)('GATEHOUSE_DB_REGION: two API processes write rows in their own region', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataDir: string;
  let sql: postgres.Sql;
  const apis: ApiProcess[] = [];
  const apps: { appKey: string; appSecret: string }[] = [];

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-db-region-'));
    // Migrate, store the token key and create one app per region before the processes start.
    const runtime = await bootstrap(
      loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
    );
    for (const region of REGIONS) {
      const { app, secret } = await runtime.apps.create(appSettings.parse({ name: region }));
      apps.push({ appKey: app.appKey, appSecret: secret });
    }
    await runtime.close();
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
    // The stand-in for CockroachDB's hidden column (test-only schema).
    for (const table of REGIONAL_TABLES) await sql.unsafe(`alter table ${table} add column crdb_region text`);
    for (const region of REGIONS)
      apis.push(
        await spawnApi({ DATABASE_URL: database.url, DATA_DIR: dataDir, GATEHOUSE_DB_REGION: region }),
      );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apis.map(stop));
    await sql?.end();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A real challenge through one API: init, proof-of-work, submit; returns the challenge id. */
  async function solve(api: ApiProcess, appKey: string): Promise<string> {
    const init = await postJson(
      `${api.url}/v1/challenge/init`,
      { app_key: appKey, action: 'login', referer: 'https://shop.example/login' },
      { 'User-Agent': 'Mozilla/5.0 Chrome/131.0.0.0', 'Accept-Language': 'en' },
    );
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    const data = init.body.data as Json;
    const submit = await postJson(`${api.url}/v1/challenge/submit`, {
      app_key: appKey,
      challenge_id: data.challenge_id,
      challenge: data.challenge,
      pow: await solvePuzzle(data.pow as Puzzle),
    });
    expect(submit.status, JSON.stringify(submit.body)).toBe(200);
    return data.challenge_id as string;
  }

  it('homes each row in the region of the process that wrote it (pass and server tokens, attempts, usage)', {
    timeout: 120_000,
  }, async () => {
    const challenges: string[][] = [[], []];
    for (const [i, api] of apis.entries()) {
      const { appKey, appSecret } = apps[i]!;
      for (let n = 0; n < 2; n++) challenges[i]!.push(await solve(api, appKey));
      const issued = await postJson(
        `${api.url}/v1/server/challenge/issue`,
        { action: 'export', ttl: 300, max_uses: 1 },
        { 'X-App-Key': appKey, 'X-App-Secret': appSecret },
      );
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    }
    // The hourly usage counts reach the table with the next periodic flush (every 5 s), not at once.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await sql<{ n: number }[]>`select count(distinct app_key)::int as n from usage_hourly`;
      const n = row?.n ?? 0;
      if (n === apps.length) break;
      if (Date.now() > deadline) throw new Error(`usage_hourly holds ${n} of ${apps.length} apps after 30 s`);
      await new Promise((r) => setTimeout(r, 250));
    }

    const appIds = await sql<{ id: string; app_key: string }[]>`select id, app_key from apps`;
    const idOf = (i: number) => appIds.find((a) => a.app_key === apps[i]!.appKey)!.id;
    for (const [i, region] of REGIONS.entries()) {
      const id = idOf(i);
      const pass = await sql`select challenge_id, crdb_region from pass_tokens where app_id = ${id}`;
      expect(pass.map((r) => r.challenge_id).sort()).toEqual([...challenges[i]!].sort());
      expect(pass.map((r) => r.crdb_region)).toEqual([region, region]);
      const attempts = await sql`select crdb_region from challenge_attempts where app_id = ${id}`;
      expect(attempts.map((r) => r.crdb_region)).toEqual([region, region]);
      const server = await sql`select crdb_region from server_tokens where app_id = ${id}`;
      expect(server.map((r) => r.crdb_region)).toEqual([region]);
      const usage = await sql`select challenges, crdb_region from app_usage where app_id = ${id}`;
      expect(usage).toEqual([{ challenges: 2, crdb_region: region }]);
      const hourly =
        await sql`select distinct crdb_region from usage_hourly where app_key = ${apps[i]!.appKey}`;
      expect(hourly).toEqual([{ crdb_region: region }]);
    }
    // Nothing was written without a region.
    for (const table of REGIONAL_TABLES) {
      const [row] = await sql.unsafe(`select count(*)::int as n from ${table} where crdb_region is null`);
      expect(row!.n, table).toBe(0);
    }
  });

  it('refuses to start with a GATEHOUSE_DB_REGION that is not a region name, saying so', {
    timeout: 60_000,
  }, async () => {
    const child = spawn(join(ROOT, 'node_modules/.bin/node'), ['api/src/server.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        GATEHOUSE_DB_REGION: 'Europe West 1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => {
      output += d;
    });
    child.stderr!.on('data', (d) => {
      output += d;
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(output).toContain('GATEHOUSE_DB_REGION must be a CockroachDB region name');
  });
});
