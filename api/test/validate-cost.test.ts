import type { Database } from '@gatehouse/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, mintLoginToken, startTestApi, type TestApi, verdictOf } from './harness.ts';

const run = await databaseAvailable();

/**
 * The database work a validation costs, by verdict: an attacker's replays and forgeries must not cost more
 * than an honest validation (issue 14). Counted as calls into the query builder: after the first validation
 * prepared the claim statement, each validation should build no query at all (the prepared statement runs).
 */
describe.runIf(run)('validation cost by verdict', () => {
  let api: TestApi;
  let built: string[];
  let db: Database;
  beforeAll(async () => {
    api = await startTestApi();
    const real = api.runtime.db;
    built = [];
    db = new Proxy(real, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          built.push(String(key));
          return value.apply(target, args);
        };
      },
    });
  });
  afterAll(() => api?.close());

  async function token(appId: string) {
    const app = (await api.runtime.apps.findById(appId))!;
    return { app, minted: await mintLoginToken(api, appId, 'ch_cost') };
  }

  it('fresh, replayed and forged tokens: no query built per validation, and a forgery touches no database', async () => {
    const created = await api.createApp({ name: 'cost' });
    const { app, minted } = await token(created.appId);
    // The first validation on this database prepares the statement; measure from the second token on.
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted))).toBe('valid');
    const second = await token(created.appId);

    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, second.minted))).toBe('valid');
    expect(built).toEqual([]);

    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, second.minted))).toBe(
      'token_already_used',
    );
    expect(built).toEqual([]);

    const forged = `${second.minted.slice(0, -4)}AAAA`;
    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, forged))).toBe('token_not_found');
    expect(built).toEqual([]);
  });

  it('a replay with the same idempotency key shortly after is the same verdict, still one statement', async () => {
    const created = await api.createApp({ name: 'cost-retry' });
    const { app, minted } = await token(created.appId);
    const options = { idempotencyKey: 'retry-1' };
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, options))).toBe('valid');
    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, options))).toBe('valid');
    expect(
      await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, { idempotencyKey: 'x' })),
    ).toBe('token_already_used');
    expect(built).toEqual([]);
  });
});
