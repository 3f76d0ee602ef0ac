import type { Database } from '@gatehouse/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countChallenge, QUOTA_IN_FLIGHT } from '../src/quotas/monthly-quota.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

/**
 * The quota counts of one event-loop turn share a statement per app (issue 14). The bound must hold exactly
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
});
