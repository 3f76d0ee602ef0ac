import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * The admin app list had no paging: with 1,000 apps one answer was 900 KB and took 520 ms at the median.
 * It now answers a page at a time in creation order (100 by default, 500 at most), with a cursor to the
 * next page; every app is on exactly one page, also when apps are created while a client is paging.
 */
const run = await databaseAvailable();

describe.runIf(run)('admin API: the app list in pages', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  const get = async (query: string) => {
    const res = await fetch(`${api.url}/admin/v1/apps${query}`, {
      headers: { authorization: `Bearer ${api.runtime.adminToken}` },
    });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
  };

  it('pages through every app exactly once, in creation order, also with apps created meanwhile', async () => {
    const created: string[] = [];
    for (let i = 0; i < 230; i++) created.push((await api.createApp({ name: `paged-${i}` })).appKey);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await get(cursor ? `?cursor=${encodeURIComponent(cursor)}` : '');
      expect(page.status).toBe(200);
      expectMatchesOpenApi('/admin/v1/apps', 'get', page);
      sizes.push(page.body.data.apps.length);
      seen.push(...page.body.data.apps.map((a: Json) => a.app_key));
      cursor = page.body.data.next_cursor;
      // An app created between pages is shown once, on a later page.
      if (pages++ === 0) created.push((await api.createApp({ name: 'late' })).appKey);
    } while (cursor);
    // Full pages, then the rest (the database may hold a few apps of its own besides these).
    expect(sizes.slice(0, -1)).toEqual([100, 100]);
    expect(sizes.at(-1)).toBeGreaterThanOrEqual(31);
    // Exactly once each (apps created within one clock tick are ordered among themselves by id).
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(created));
    expect(seen.at(-1)).toBe(created.at(-1));
  });

  it('takes a page size up to 500 and refuses what is not a size or a cursor with 400', async () => {
    const small = await get('?limit=7');
    expect(small.body.data.apps).toHaveLength(7);
    expect(typeof small.body.data.next_cursor).toBe('string');
    for (const query of [
      '?limit=0',
      '?limit=501',
      '?limit=ten',
      '?cursor=not-a-cursor',
      `?cursor=${'x'.repeat(300)}`,
    ]) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
  });
});
