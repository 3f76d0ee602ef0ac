import { openDatabase } from '@gatehouse/core/db';
import { apps } from '@gatehouse/core/db/schema';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppRepository } from './repository.ts';
import { appSettings } from './settings.ts';

/**
 * The look-up by key answers from a short cache, and init reads that cache without a promise
 * (cachedByKey): it must answer exactly what findByKey would, forget an app this instance
 * writes, and expire, so that a change made elsewhere is seen within the TTL.
 */
describe('AppRepository cache', () => {
  let handle: Awaited<ReturnType<typeof openDatabase>>;
  beforeAll(async () => {
    handle = await openDatabase({ dataDir: 'memory://' });
    await handle.migrate();
  });
  afterAll(() => handle?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is empty before a look-up, holds what findByKey found (a missing key too), and forgets writes', async () => {
    const repo = new AppRepository(handle.db);
    const { app } = await repo.create(appSettings.parse({ name: 'cached' }));
    expect(repo.cachedByKey(app.appKey)).toBeUndefined();
    expect((await repo.findByKey(app.appKey))?.id).toBe(app.id);
    expect(repo.cachedByKey(app.appKey)?.id).toBe(app.id);
    expect(repo.cachedByKey(app.appKey)?.disabledAt).toBeNull();
    expect(repo.cachedByKey('pk_missing')).toBeUndefined();
    expect(await repo.findByKey('pk_missing')).toBeNull();
    expect(repo.cachedByKey('pk_missing')).toBeNull();

    // A write through this instance: the cache forgets the app, the next look-up reads the new row.
    await repo.setDisabled(app.appKey, true);
    expect(repo.cachedByKey(app.appKey)).toBeUndefined();
    expect((await repo.findByKey(app.appKey))?.disabledAt).toBeInstanceOf(Date);
    expect(repo.cachedByKey(app.appKey)?.disabledAt).toBeInstanceOf(Date);

    // A key rotation without grace: the old key names nothing, from the cache or not.
    const rotated = await repo.rotateKey(app.appKey, 0);
    expect(repo.cachedByKey(app.appKey)).toBeUndefined();
    expect(await repo.findByKey(app.appKey)).toBeNull();
    expect(repo.cachedByKey(app.appKey)).toBeNull();
    expect((await repo.findByKey(rotated.appKey))?.id).toBe(app.id);
  });

  it('expires: a change written by another instance is seen once the cached look-up is 2 s old', async () => {
    const repo = new AppRepository(handle.db);
    const { app } = await repo.create(appSettings.parse({ name: 'expiring' }));
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = Date.now();
    await repo.findByKey(app.appKey);
    await handle.db.update(apps).set({ name: 'renamed' }).where(eq(apps.id, app.id));
    vi.setSystemTime(t0 + 1_999);
    expect(repo.cachedByKey(app.appKey)?.name).toBe('expiring');
    vi.setSystemTime(t0 + 2_000);
    expect(repo.cachedByKey(app.appKey)).toBeUndefined();
    expect((await repo.findByKey(app.appKey))?.name).toBe('renamed');
    expect(repo.cachedByKey(app.appKey)?.name).toBe('renamed');
  });
});
