import { type Database, rowsOf } from '@gatehouse/core/db';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countChallenge,
  countChallengeNow,
  flushQuotaCounts,
  QUOTA_BEHIND_WINDOW_MS,
  QUOTA_IN_FLIGHT,
  QUOTA_RETRY_MS,
} from '../src/quotas/monthly-quota.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

/**
 * The quota counts of one event-loop turn share a statement per app. The bound must hold exactly
 * as with one conditional statement per init: of n concurrent counts against a quota with room for k < n,
 * exactly k are allowed, and the month's count ends at the quota, never past it.
 */
describe.runIf(run)('quota counts in batches', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function app(settings: Record<string, unknown>) {
    const created = await api.createApp({ name: 'quota-batch', ...settings });
    return (await api.runtime.apps.findById(created.appId))!;
  }

  const allowed = (decisions: { allowed: boolean }[]) => decisions.filter((d) => d.allowed).length;

  it('quota 5, 12 counts in one turn: 5 allowed, each told a distinct count, none past the quota', async () => {
    const a = await app({ monthly_quota: 5 });
    const decisions = await Promise.all(Array.from({ length: 12 }, () => countChallenge(api.runtime.db, a)));
    expect(allowed(decisions)).toBe(5);
    const used = decisions.filter((d) => d.allowed).map((d) => d.used);
    expect(used.toSorted((x, y) => x - y)).toEqual([1, 2, 3, 4, 5]);
    // Exhausted: a later turn is refused too.
    expect((await countChallenge(api.runtime.db, a)).allowed).toBe(false);
  });

  it('room for 3 left and 10 counts in one turn: exactly 3 more allowed', async () => {
    const a = await app({ monthly_quota: 10 });
    expect(
      allowed(await Promise.all(Array.from({ length: 7 }, () => countChallenge(api.runtime.db, a)))),
    ).toBe(7);
    const more = await Promise.all(Array.from({ length: 10 }, () => countChallenge(api.runtime.db, a)));
    expect(allowed(more)).toBe(3);
  });

  it('with overage, every count of a turn is allowed and counted', async () => {
    const a = await app({ monthly_quota: 2, overage_allowed: true });
    const decisions = await Promise.all(Array.from({ length: 9 }, () => countChallenge(api.runtime.db, a)));
    expect(allowed(decisions)).toBe(9);
    expect(Math.max(...decisions.map((d) => d.used))).toBe(9);
  });

  it('two apps in the same turn count apart', async () => {
    const a = await app({ monthly_quota: 2 });
    const b = await app({ monthly_quota: 4 });
    const decisions = await Promise.all([
      ...Array.from({ length: 5 }, () => countChallenge(api.runtime.db, a)),
      ...Array.from({ length: 5 }, () => countChallenge(api.runtime.db, b)),
    ]);
    expect(allowed(decisions.slice(0, 5))).toBe(2);
    expect(allowed(decisions.slice(5))).toBe(4);
  });

  it('counts arriving while QUOTA_IN_FLIGHT statements are in flight wait and go together in the next one', async () => {
    expect(QUOTA_IN_FLIGHT).toBe(2);
    const a = await app({ monthly_quota: 100 });
    // The database as the batcher sees it, its statements held until `open` (in flight for as long as the
    // test wants) and counted.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let statements = 0;
    const real = api.runtime.db;
    const slow = new Proxy(real, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property === 'execute') {
          return async (...args: unknown[]) => {
            statements++;
            await gate;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Database;
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    // Eleven counts, each in a turn of its own: the first two are sent at once (one statement each), the
    // other nine wait for one of them to answer.
    const counts: ReturnType<typeof countChallenge>[] = [];
    for (let i = 0; i < 11; i++) {
      counts.push(countChallenge(slow, a));
      await turn();
      await turn();
    }
    expect(statements).toBe(2);
    open();
    const decisions = await Promise.all(counts);
    // The nine in one statement: 11 counts in 3 statements, each told a distinct count.
    expect(statements).toBe(3);
    expect(allowed(decisions)).toBe(11);
    expect(decisions.map((d) => d.used).toSorted((x, y) => x - y)).toEqual(
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    // Idle again: the next count goes alone, at once.
    expect((await countChallenge(slow, a)).used).toBe(12);
    expect(statements).toBe(4);
  });

  /** The app's count this month as PostgreSQL (or PGlite) holds it. */
  async function stored(appId: string): Promise<number> {
    const result = await api.runtime.db.execute(
      sql`select challenges from app_usage where app_id = ${appId}`,
    );
    const rows = rowsOf<{ challenges: number | string }>(result);
    return rows.length ? Number(rows[0]!.challenges) : 0;
  }

  /** The database as the batcher sees it: its statements counted, the first `failures` of them failing. */
  function flaky(failures: number) {
    const real = api.runtime.db;
    const seen = { statements: 0 };
    const db = new Proxy(real, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property === 'execute') {
          return async (...args: unknown[]) => {
            seen.statements++;
            if (seen.statements <= failures) throw new Error('connection lost (test)');
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Database;
    return { db, seen };
  }

  it('with overage, countChallengeNow answers at once and the units are written behind, many a statement', async () => {
    const a = await app({ monthly_quota: 2, overage_allowed: true });
    const { db, seen } = flaky(0);
    const decisions = Array.from({ length: 40 }, () => countChallengeNow(db, a));
    expect(decisions.every((d) => d?.allowed === true)).toBe(true);
    // Nothing sent yet: the statement goes when the window ends (or at the flush), with all forty.
    expect(seen.statements).toBe(0);
    await flushQuotaCounts(db);
    expect(seen.statements).toBe(1);
    expect(await stored(a.id)).toBe(40);
    // Awaited counts of the same app keep their positions after the units written behind.
    expect((await countChallenge(db, a)).used).toBe(41);
  });

  it('without overage (or with a lapsed subscription) countChallengeNow declines: the count is awaited', async () => {
    const a = await app({ monthly_quota: 5 });
    const { db, seen } = flaky(0);
    expect(countChallengeNow(db, a)).toBeUndefined();
    const lapsed = await app({ plan: 'pro', subscription_expires_at: '2020-01-01T00:00:00Z' });
    expect(countChallengeNow(db, lapsed)).toBeUndefined();
    await flushQuotaCounts(db);
    expect(seen.statements).toBe(0);
    expect(await stored(a.id)).toBe(0);
  });

  it('units written behind in separate turns within the window share one statement; none is lost', async () => {
    // A server answering inits one at a time (image inits, as drawings come back) counts one per turn: per
    // turn alone, that was one upsert per init.
    const a = await app({ plan: 'pro' });
    const { db, seen } = flaky(0);
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    for (let i = 0; i < 6; i++) {
      expect(countChallengeNow(db, a)?.allowed).toBe(true);
      await turn();
    }
    // Six turns take well under a millisecond. The window's timer was armed after `started`, so if less than
    // the window has passed it has not fired; only a stall that long (a loaded machine) can split them.
    const withinWindow = performance.now() - started < QUOTA_BEHIND_WINDOW_MS;
    if (withinWindow) expect(seen.statements).toBe(0);
    // The window ends by itself: no flush needed for the statement to go.
    const deadline = Date.now() + 2000;
    while (seen.statements === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, QUOTA_BEHIND_WINDOW_MS * 2));
    if (withinWindow) expect(seen.statements).toBe(1);
    else expect(seen.statements).toBeLessThan(6);
    await flushQuotaCounts(db);
    expect(await stored(a.id)).toBe(6);
  });

  it('units written behind survive a failed statement: kept and sent again QUOTA_RETRY_MS later', async () => {
    const a = await app({ plan: 'pro' });
    const { db, seen } = flaky(1);
    for (let i = 0; i < 7; i++) countChallengeNow(db, a);
    await new Promise((resolve) => setTimeout(resolve, QUOTA_BEHIND_WINDOW_MS * 3));
    expect(seen.statements).toBe(1);
    // More while the retry is pending: they wait for it rather than hammering a lost database.
    for (let i = 0; i < 3; i++) countChallengeNow(db, a);
    await new Promise((resolve) => setTimeout(resolve, QUOTA_RETRY_MS / 2));
    expect(seen.statements).toBe(1);
    expect(await stored(a.id)).toBe(0);
    const deadline = Date.now() + QUOTA_RETRY_MS * 3;
    while ((await stored(a.id)) < 10 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await stored(a.id)).toBe(10);
    expect(seen.statements).toBe(2);
  });

  it('an invisible init of an overage app is answered before its unit is written, and the unit lands', async () => {
    const created = await api.createApp({ name: 'quota-behind', plan: 'pro', test_mode: true });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post('/v1/challenge/init', { app_key: created.appKey, action: 'login' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.every((a) => a.body.data.mode === 'challenge')).toBe(true);
    await flushQuotaCounts(api.runtime.db);
    expect(await stored(created.appId)).toBe(6);
  });
});
