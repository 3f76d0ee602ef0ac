import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from './index.ts';
import { enableRegionalWrites, regional, regionalColumn } from './region.ts';
import { rowsOf } from './rows.ts';
import { challengeAttempts, passTokens, serverTokens } from './schema.ts';

/*
 * Explicit crdb_region writes on the embedded database, with a plain `crdb_region` column standing in
 * for the hidden one CockroachDB adds to a REGIONAL BY ROW table (on pass_tokens and app_usage only, so
 * a table without it is covered too). api/test/db-region.test.ts does the same through two API processes
 * on PostgreSQL.
 */
describe('regional writes', () => {
  let database: DatabaseHandle;
  const rows = async (query: ReturnType<typeof sql>) =>
    rowsOf<Record<string, unknown>>(await database.db.execute(query));
  const token = (id: string) => ({
    id,
    appId: 'app_1',
    challengeId: `ch_${id}`,
    action: 'login',
    captchaArgs: {},
    issuedAt: new Date(),
    expiresAt: new Date(Date.now() + 60_000),
  });

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
  }, 60_000);
  afterAll(() => database?.close());

  it('refuses a value that is not a region name, before touching the database', async () => {
    await expect(enableRegionalWrites(database.db, 'Europe West')).rejects.toThrow(
      'GATEHOUSE_DB_REGION "Europe West" is not a region name',
    );
  });

  it('changes nothing while no regional table has the column (PostgreSQL, CockroachDB before its localities)', async () => {
    const writes = await enableRegionalWrites(database.db, 'europe-west1');
    expect(writes).toMatchObject({ engine: 'postgres', databaseRegions: [], tables: [] });
    expect(regional(database.db, passTokens)).toBe(passTokens);
    await database.db.insert(regional(database.db, passTokens)).values(token('before'));
  });

  it('names crdb_region on the tables that have the column, once they are looked at again', async () => {
    await database.db.execute(sql`alter table pass_tokens add column crdb_region text`);
    await database.db.execute(sql`alter table app_usage add column crdb_region text`);
    const writes = await enableRegionalWrites(database.db, 'us-east1');
    expect(writes.tables).toEqual(['app_usage', 'pass_tokens']);
    await database.db.insert(regional(database.db, passTokens)).values(token('after'));
    expect(await rows(sql`select id, crdb_region from pass_tokens order by id`)).toEqual([
      { id: 'after', crdb_region: 'us-east1' },
      { id: 'before', crdb_region: null },
    ]);
    // Reads of the table itself are unchanged (the twin is only for inserts).
    const [read] = await database.db.select().from(passTokens).where(sql`${passTokens.id} = 'after'`);
    expect(read).toMatchObject({ id: 'after', challengeId: 'ch_after' });
    expect(Object.keys(read!)).not.toContain('crdbRegion');
    // A table without the column is inserted into as before, upserts included.
    expect(regional(database.db, serverTokens)).toBe(serverTokens);
    const attempt = { id: 'ch_1', appId: 'app_1', attempts: 1, expiresAt: new Date(Date.now() + 60_000) };
    await database.db
      .insert(regional(database.db, challengeAttempts))
      .values(attempt)
      .onConflictDoUpdate({
        target: challengeAttempts.id,
        set: { attempts: sql`${challengeAttempts.attempts} + 1` },
      });
    // The hand-written upsert's fragments.
    const region = regionalColumn(database.db, 'app_usage');
    await database.db.execute(
      sql`insert into app_usage (app_id, period, challenges${region.column}) values ('app_1', '2026-11', 1${region.value})`,
    );
    expect(await rows(sql`select crdb_region from app_usage`)).toEqual([{ crdb_region: 'us-east1' }]);
    // …and adds nothing where the column is missing.
    const none = regionalColumn(database.db, 'challenge_attempts');
    await database.db.execute(
      sql`insert into challenge_attempts (id, app_id, expires_at${none.column}) values ('ch_2', 'app_1', now()${none.value})`,
    );
    expect(await rows(sql`select id from challenge_attempts order by id`)).toEqual([
      { id: 'ch_1' },
      { id: 'ch_2' },
    ]);
  });
});
