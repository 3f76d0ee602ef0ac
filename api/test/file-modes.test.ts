import { lstatSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, TEST_DATABASE, type TestApi } from './harness.ts';

/*
 * The embedded database's folder is private to the user running Gatehouse: the master token key sits in
 * one of its tables, and PGlite left to itself makes most of its files 0666 and its folders 0755. Every
 * folder is 0700 and every file 0600, including the files PGlite creates long after start-up (a new WAL
 * segment, new relation files).
 */

/** Every path under `dir` with its permission bits. */
function modes(dir: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    out.push({ path, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return out;
}

function expectPrivate(dir: string): void {
  const all = modes(dir);
  const loose = all.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));
  expect(loose.map((e) => `${e.mode.toString(8)} ${e.path}`)).toEqual([]);
  expect(all.length).toBeGreaterThan(100);
}

describe(`DATA_DIR is private when Gatehouse writes there (${TEST_DATABASE})`, () => {
  it('generated admin token and sync credential: the folder 0700, the files 0600', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gatehouse-modes-')), 'data');
    // Without GATEHOUSE_ADMIN_TOKEN and STANDBY_SYNC_TOKEN both are generated into DATA_DIR.
    const api = await startTestApi({ DATA_DIR: dataDir });
    try {
      expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);
      const files = modes(dataDir).filter((e) => !e.dir);
      expect(files.map((e) => e.path.slice(dataDir.length + 1)).sort()).toEqual(
        expect.arrayContaining(['admin-token', 'standby-sync-token']),
      );
      for (const f of files) expect(f.mode, f.path).toBe(0o600);
    } finally {
      await api.close();
    }
  }, 60_000);
});

// Only the embedded database has files of its own; on PostgreSQL the server's own folder is its business.
if (TEST_DATABASE === 'pglite') {
  describe('the embedded database folder is private (files 0600, folders 0700)', () => {
    let api: TestApi;
    let dataDir: string;
    let pgliteDir: string;

    beforeAll(async () => {
      dataDir = join(mkdtempSync(join(tmpdir(), 'gatehouse-modes-')), 'data');
      pgliteDir = join(dataDir, 'pgdata');
      api = await startTestApi({ DATA_DIR: dataDir, PGLITE_DIR: pgliteDir });
    });
    afterAll(() => api?.close());

    it('after start-up and migrations', () => {
      expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);
      expectPrivate(pgliteDir);
    });

    it('for files PGlite creates later: rows written over HTTP, a new WAL segment, a checkpoint', async () => {
      const before = new Set(modes(pgliteDir).map((e) => e.path));
      const { appKey, appSecret } = await api.createApp({ name: 'modes', test_mode: true });
      for (let i = 0; i < 20; i++) {
        const issued = await api.post(
          '/v1/server/challenge/issue',
          { action: 'login' },
          { 'X-App-Key': appKey, 'X-App-Secret': appSecret },
        );
        expect(issued.status).toBe(200);
      }
      await api.runtime.db.execute(sql`create table mode_probe (id text primary key, body text)`);
      await api.runtime.db.execute(sql`select pg_switch_wal()`);
      await api.runtime.db.execute(sql`checkpoint`);
      const created = modes(pgliteDir).filter((e) => !before.has(e.path));
      expect(created.length).toBeGreaterThan(0);
      expect(created.some((e) => e.path.includes('pg_wal'))).toBe(true);
      expectPrivate(pgliteDir);
    });
  });
}
