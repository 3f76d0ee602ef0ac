import { openDatabase } from '@gatehouse/core/db';
import { challengeAttempts, passTokens, serverTokens } from '@gatehouse/core/db/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from './retention.ts';

describe('purgeExpired', () => {
  let handle: Awaited<ReturnType<typeof openDatabase>>;
  beforeAll(async () => {
    handle = await openDatabase({ dataDir: 'memory://' });
    await handle.migrate();
  });
  afterAll(() => handle?.close());

  it('deletes rows more than an hour past their expiry and keeps the others', async () => {
    const { db } = handle;
    const long = new Date(Date.now() - 2 * 3600_000);
    const recent = new Date(Date.now() - 60_000);
    for (const [id, at] of [
      ['old', long],
      ['new', recent],
    ] as const) {
      await db.insert(passTokens).values({
        id,
        appId: 'a',
        challengeId: 'ch_x',
        action: 'login',
        captchaArgs: {},
        issuedAt: at,
        expiresAt: at,
      });
      await db
        .insert(serverTokens)
        .values({ id, appId: 'a', action: 'login', maxUses: 1, issuedAt: at, expiresAt: at });
      await db.insert(challengeAttempts).values({ id, appId: 'a', expiresAt: at });
    }
    await purgeExpired(db);
    for (const table of [passTokens, serverTokens, challengeAttempts]) {
      const ids = (await db.select({ id: table.id }).from(table)).map((r) => r.id);
      expect(ids).toEqual(['new']);
    }
  });
});
