import { rowsOf } from '@gatehouse/core/db';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, mintLoginToken, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

/**
 * Where a consumed pass token's row goes (core/migrations/0006_pass_tokens_fillfactor.sql). A token is
 * inserted once and updated once, when a validation claims it. When the new version fits on the row's own
 * page, PostgreSQL writes a heap-only update: no entry in pass_tokens' two indexes, less WAL, no index bloat.
 * Read from outside the API: each row's physical place (`ctid`) before and after validations sent over HTTP
 * in concurrent groups, as load arrives (a group's claims share one statement).
 */
describe.runIf(run)('pass_tokens pages', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  const query = async <T>(statement: ReturnType<typeof sql>) =>
    rowsOf<T>(await api.runtime.db.execute(statement));
  /** Each row's page: the block number of its `ctid`. */
  const blocks = async (ids: string[]) => {
    const rows = await query<{ id: string; block: number }>(
      sql`select id, (ctid::text::point)[0]::int as block from pass_tokens where id in ${ids}`,
    );
    return new Map(rows.map((r) => [r.id, Number(r.block)]));
  };

  it('a validation claims its token in place: at least 3 in 4 consumed rows stay on their page (with pages packed full, 2 in 5 did)', async () => {
    const app = await api.createApp({ name: 'pages' });
    const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    const tokens: string[] = [];
    for (let i = 0; i < 240; i++) tokens.push(await mintLoginToken(api, app.appId, `ch_pages_${i}`));
    const ids = (
      await query<{ id: string }>(sql`select id from pass_tokens where app_id = ${app.appId}`)
    ).map((r) => r.id);
    expect(ids).toHaveLength(240);
    const before = await blocks(ids);

    for (let i = 0; i < tokens.length; i += 20) {
      const answers = await Promise.all(
        tokens.slice(i, i + 20).map((t) => api.post('/v1/validate', { pass_token: t }, headers)),
      );
      for (const a of answers) expect(a.body.data?.valid, JSON.stringify(a.body)).toBe(true);
    }

    const after = await blocks(ids);
    const stayed = ids.filter((id) => after.get(id) === before.get(id)).length;
    expect(stayed / ids.length, `${stayed} of ${ids.length} stayed on their page`).toBeGreaterThanOrEqual(
      0.75,
    );
  });
});
